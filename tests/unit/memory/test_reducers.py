from __future__ import annotations

import pytest

from ufo_mobile.core.memory import reducers as r
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.memory.state import ActionEntry, SharedState


def test_append_unique_keeps_the_first_item_of_an_id() -> None:
    a1, b, a2 = {"id": "a", "v": 1}, {"id": "b", "v": 2}, {"id": "a", "v": 3}
    assert r.append_unique([a1, b], a2) == [a1, b]
    assert r.append_unique([a1], [b, {"id": "c"}, b]) == [a1, b, {"id": "c"}]


def test_append_unique_items_without_id_always_append() -> None:
    assert r.append_unique([{"x": 1}], {"x": 1}) == [{"x": 1}, {"x": 1}]


def test_strings_are_their_own_id() -> None:
    assert r.append_unique(["com.a", "com.b"], ["com.a", "com.c"]) == ["com.a", "com.b", "com.c"]


def test_append_items_and_replace_value() -> None:
    assert r.append_items([1], 2) == [1, 2] and r.append_items([1], [2, 2]) == [1, 2, 2]
    assert r.replace_value([1], [2]) == [2]


def test_apply_update_uses_each_fields_reducer_and_returns_new_state() -> None:
    state = SharedState(current_subgoal="t", plan=["old"])
    entry = ActionEntry(id="s1", step=1, name="click", args={"index": 3})
    new = r.apply_update(state, {
        "steps_used": 1,
        "plan": ["a", "b"],
        "action_history": entry,
        "action_outcomes": True,
        "summary_history": "tapped",
        "screen_changes": {"1": "k"},
    })
    assert state.plan == ["old"] and state.steps_used == 0  # the old state is untouched
    assert new.plan == ["a", "b"]
    assert new.steps_used == 1
    assert new.action_history == [entry]
    assert new.action_outcomes == [True]
    assert new.summary_history == ["tapped"]
    new2 = r.apply_update(new, {"steps_used": 1, "action_outcomes": [False, False],
                                "screen_changes": {"2": "j"}, "action_history": entry})
    assert new2.steps_used == 2
    assert new2.action_outcomes == [True, False, False]
    assert new2.screen_changes == {"1": "k", "2": "j"}
    assert len(new2.action_history) == 1  # same id: not added twice
    assert new2.consecutive_failures() == 2


def test_add_messages_drops_a_duplicate_id_and_replace_messages_replaces() -> None:
    m1 = ChatMessage(role="user", content="one", id="m1")
    m1b = ChatMessage(role="user", content="one again", id="m1")
    m2 = ChatMessage(role="assistant", content="two", id="m2")
    m3 = ChatMessage(role="user", content="three")
    state = r.apply_update(SharedState(), {"message_history": [m1, m2]})
    state = r.apply_update(state, {"message_history": [m1b, m3]})
    assert [m.text() for m in state.message_history] == ["one", "two", "three"]
    assert r.replace_messages(state.message_history, [m2]) == [m2]


def test_unknown_field_is_an_error() -> None:
    with pytest.raises(KeyError, match="no field 'plann'"):
        r.apply_update(SharedState(), {"plann": []})


def test_invalid_value_is_rejected() -> None:
    with pytest.raises(ValueError):
        r.apply_update(SharedState(), {"width": "wide"})


def test_empty_update_is_identity() -> None:
    state = SharedState()
    assert r.apply_update(state, None) is state
    assert r.apply_update(state, {}) is state


def test_append_items_drops_an_item_whose_id_is_there_already() -> None:
    """Seed 003: an ``id`` key or attribute identifies an item; the first one stays."""
    a1, b, a2 = {"id": "a", "v": 1}, {"id": "b"}, {"id": "a", "v": 2}
    assert r.append_items([a1], [b, a2, b]) == [a1, b]
    e1 = ActionEntry(id="s1", step=1, name="click")
    e2 = ActionEntry(id="s1", step=2, name="swipe")
    assert r.append_items([e1], e2) == [e1]


def test_append_items_without_an_id_always_append() -> None:
    assert r.append_items(["tapped"], ["tapped", "tapped"]) == ["tapped"] * 3  # a string is not an id
    assert r.append_items([{"x": 1}], {"x": 1}) == [{"x": 1}, {"x": 1}]
    m = ChatMessage(role="user", content="no id")
    assert r.append_items([m], m) == [m, m]
