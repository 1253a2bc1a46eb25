from __future__ import annotations

import itertools
from typing import Any

import pytest

from ufo_mobile.core.states.rulebook import MOBILE_RULES, AgentMachine
from ufo_mobile.errors import IllegalTransitionError

LEGAL = {("NONE", "CONTINUE"), ("NONE", "FAIL"), ("CONTINUE", "CONTINUE"), ("CONTINUE", "FINISH"),
         ("CONTINUE", "FAIL"), ("FAIL", "FINISH"), ("FINISH", "FINISH"),
         ("CONTINUE", "TAKEOVER"), ("TAKEOVER", "CONTINUE"), ("TAKEOVER", "FAIL"),
         ("CONTINUE", "CONFIRM"), ("CONFIRM", "CONTINUE"), ("CONFIRM", "FINISH"), ("CONFIRM", "FAIL"),
         ("CONTINUE", "PENDING"), ("PENDING", "CONTINUE"), ("PENDING", "FAIL")}
PATH_TO = {"NONE": [], "CONTINUE": ["CONTINUE"], "FAIL": ["CONTINUE", "FAIL"], "FINISH": ["CONTINUE", "FINISH"],
           "TAKEOVER": ["CONTINUE", "TAKEOVER"], "CONFIRM": ["CONTINUE", "CONFIRM"],
           "PENDING": ["CONTINUE", "PENDING"]}


class ListLogger:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **kw: Any) -> None:
        self.events.append((event, kw))


def machine_at(state: str, logger: ListLogger | None = None) -> AgentMachine:
    m = AgentMachine(MOBILE_RULES, logger=logger or ListLogger())
    for dest in PATH_TO[state]:
        m.move(dest)
    assert m.current == state
    return m


def test_rulebook_is_exactly_the_design() -> None:
    assert set(MOBILE_RULES.moves) == LEGAL
    assert MOBILE_RULES.initial == "NONE"


@pytest.mark.parametrize(("source", "dest"), sorted(itertools.product(MOBILE_RULES.states, repeat=2)))
def test_every_move(source: str, dest: str) -> None:
    m = machine_at(source)
    if (source, dest) in LEGAL:
        m.move(dest)
        assert m.current == dest
    else:
        with pytest.raises(IllegalTransitionError) as info:
            m.move(dest)
        assert (info.value.source, info.value.dest) == (source, dest)
        assert m.current == source


def test_unknown_destination_is_illegal() -> None:
    with pytest.raises(IllegalTransitionError):
        machine_at("CONTINUE").move("PAUSED")


def test_every_transition_is_logged_with_context() -> None:
    log = ListLogger()
    m = AgentMachine(MOBILE_RULES, logger=log, agent_name="MobileAgent")
    m.move("CONTINUE", step=0, reason="start", run_id="r1")
    m.move("FAIL", step=3, reason="too many failures", run_id="r1")
    assert log.events == [
        ("transition", {"agent": "MobileAgent", "run_id": "r1", "step": 0, "from": "NONE", "to": "CONTINUE",
                        "reason": "start"}),
        ("transition", {"agent": "MobileAgent", "run_id": "r1", "step": 3, "from": "CONTINUE", "to": "FAIL",
                        "reason": "too many failures"}),
    ]


def test_two_machines_are_independent() -> None:
    a, b = machine_at("FINISH"), machine_at("NONE")
    assert (a.current, b.current) == ("FINISH", "NONE")
