"""The ``transitions`` machine decides the moves; its after-move hook only keeps the books."""

from __future__ import annotations

import pytest

from ufo_mobile.core.states.reasoning import MANAGER_RULES, SUBAGENT_RULES
from ufo_mobile.core.states.replay import REPLAY_RULES
from ufo_mobile.core.states.rulebook import MOBILE_RULES, AgentMachine, Move, Rulebook
from ufo_mobile.core.status import (
    MODEL_STATUSES,
    ManagerStatus,
    MobileAgentStatus,
    ModelStatus,
    ReplayStatus,
    RuntimeStatus,
    SubAgentStatus,
)
from ufo_mobile.errors import IllegalTransitionError


class Quiet:
    def info(self, event: str, **kw: object) -> None:
        return None


def test_the_machine_refuses_an_illegal_move_and_stays() -> None:
    m = AgentMachine(MOBILE_RULES, logger=Quiet(), agent_name="A")
    assert not m.can_move("FINISH")
    with pytest.raises(IllegalTransitionError) as info:
        m.move("FINISH")
    assert (info.value.source, info.value.dest, info.value.machine) == ("NONE", "FINISH", "mobile:A")
    assert m.current == "NONE"


def test_the_machine_alone_knows_the_moves() -> None:
    """A rulebook whose data says nothing else: what the machine was built with is what it allows."""
    rules = Rulebook(name="tiny", states=("NONE", "GO", "STOP"), moves=(("NONE", "GO"), ("GO", "STOP")),
                     initial="NONE")
    m = AgentMachine(rules, logger=Quiet())
    assert m.triggers() == ["GO"]
    assert m.can_move("GO") and not m.can_move("STOP") and not m.can_move("ELSEWHERE")
    m.move("GO")
    assert m.triggers() == ["STOP"]


def test_every_move_reaches_the_watcher_after_it_is_made() -> None:
    m = AgentMachine(MOBILE_RULES, logger=Quiet(), agent_name="A")
    seen: list[tuple[Move, str]] = []
    m.watch(lambda move: seen.append((move, m.current)))
    m.move("CONTINUE", step=0)
    m.move("FAIL", step=2, reason="no", run_id="r", ends_round=True)
    with pytest.raises(IllegalTransitionError):
        m.move("PENDING")
    assert seen == [(Move("A", "NONE", "CONTINUE"), "CONTINUE"),
                    (Move("A", "CONTINUE", "FAIL", step=2, reason="no", run_id="r", ends_round=True), "FAIL")]
    m.watch(None)
    m.move("FINISH")
    assert len(seen) == 2


def test_the_model_statuses_are_apart_from_the_runtimes() -> None:
    assert [s.value for s in MODEL_STATUSES] == ["CONTINUE", "FINISH", "FAIL", "PENDING", "TAKEOVER"]
    assert not set(ModelStatus) & set(RuntimeStatus)
    assert set(MobileAgentStatus) == set(ModelStatus) | {RuntimeStatus.CONFIRM}


@pytest.mark.parametrize(("rules", "states"), [(MOBILE_RULES, MobileAgentStatus), (MANAGER_RULES, ManagerStatus),
                                               (SUBAGENT_RULES, SubAgentStatus), (REPLAY_RULES, ReplayStatus)])
def test_each_agents_rulebook_is_its_own_state_set(rules: Rulebook, states: type) -> None:
    assert set(rules.states) == {"NONE", *states}
    for member in states:
        assert member.value == member.name  # the strings in run.json and replies
