"""The shared state's fields: each one is read somewhere; the ones retired still load from old runs."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ufo_mobile.core.memory.reducers import apply_update
from ufo_mobile.core.memory.state import RETIRED_FIELDS, SharedState


def test_a_state_json_from_before_loads_without_the_retired_fields() -> None:
    old = {"instruction": "t", "platform": "android", "progress_summary": "", "error_flag_plan": True,
           "last_scripter_success": None, "plan": ["a"]}
    state = SharedState.model_validate(old)
    assert state.plan == ["a"] and not RETIRED_FIELDS & set(state.model_dump())


def test_an_update_naming_a_retired_field_is_still_a_mistake() -> None:
    with pytest.raises(KeyError):
        apply_update(SharedState(), {"error_flag_plan": True})


def test_other_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError) as info:
        SharedState.model_validate({"typo": 1})
    assert [e["loc"] for e in info.value.errors()] == [("typo",)]
