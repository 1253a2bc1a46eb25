from __future__ import annotations

import pytest

from ufo_mobile.core.states import (
    AgentState,
    AgentStateManager,
    ContinueMobileAgentState,
    FailMobileAgentState,
    FinishMobileAgentState,
    MobileAgentStateManager,
    NoneMobileAgentState,
)
from ufo_mobile.errors import UnknownStateError


def test_registered_mobile_states_are_found_by_name() -> None:
    manager = MobileAgentStateManager()
    assert manager.names() == ["CONFIRM", "CONTINUE", "FAIL", "FINISH", "NONE", "PENDING", "TAKEOVER"]
    assert isinstance(manager.get_state("CONTINUE"), ContinueMobileAgentState)
    assert isinstance(manager.get_state("FINISH"), FinishMobileAgentState)
    assert isinstance(manager.get_state("FAIL"), FailMobileAgentState)
    assert isinstance(manager.none_state, NoneMobileAgentState)


def test_instances_are_cached_per_manager() -> None:
    manager = MobileAgentStateManager()
    assert manager.get_state("CONTINUE") is manager.get_state("CONTINUE")
    other = MobileAgentStateManager()
    assert other.get_state("CONTINUE") is not manager.get_state("CONTINUE")


def test_unknown_name_raises_with_known_names() -> None:
    manager = MobileAgentStateManager()
    with pytest.raises(UnknownStateError) as info:
        manager.get_state("PAUSE")
    assert info.value.name == "PAUSE"
    assert "CONTINUE" in str(info.value)


def test_registry_in_isolation_holds_only_given_states() -> None:
    manager = MobileAgentStateManager(states=[FinishMobileAgentState])
    assert manager.names() == ["FINISH"]
    with pytest.raises(UnknownStateError):
        manager.get_state("CONTINUE")


def test_add_state_changes_one_instance_only() -> None:
    class Paused(FinishMobileAgentState):
        @classmethod
        def name(cls) -> str:
            return "PAUSED"

    one, two = MobileAgentStateManager(), MobileAgentStateManager()
    one.add_state(Paused)
    assert isinstance(one.get_state("PAUSED"), Paused)
    with pytest.raises(UnknownStateError):
        two.get_state("PAUSED")


def test_each_manager_class_has_its_own_declarations() -> None:
    class OtherManager(AgentStateManager):
        @property
        def none_state(self) -> AgentState:
            return self.get_state("X")

    @OtherManager.register
    class X(FinishMobileAgentState):
        @classmethod
        def name(cls) -> str:
            return "X"

    assert OtherManager().names() == ["X"]
    assert "X" not in MobileAgentStateManager().names()


def test_state_flags() -> None:
    m = MobileAgentStateManager()
    assert not m.get_state("CONTINUE").is_round_end()
    assert m.get_state("FINISH").is_round_end() and m.get_state("FINISH").is_subtask_end()
    assert m.get_state("FAIL").is_round_end() and m.get_state("FAIL").is_subtask_end()  # seed 004
    assert not m.none_state.is_round_end()
