"""The shared state's fields: each one is read somewhere; the ones retired still load from old runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

import ufo_mobile
from ufo_mobile.core.memory.reducers import apply_update
from ufo_mobile.core.memory.state import RETIRED_FIELDS, SharedState

PACKAGE = Path(ufo_mobile.__file__).parent
STATE_MODULE = PACKAGE / "core" / "memory" / "state.py"

#: Fields kept though nothing in the package reads them yet, with the reason.
UNREAD = {"message_history": "where the chat messages a phase returns go (seed 003's phase results, "
                             "tests/unit/processors/test_phase_results.py); no phase of the package returns any",
          "custom_variables": "your own tools' values: a tool's state_update merges into it and its later calls "
                              "read it (tests/unit/tools/test_custom_tool_state.py)"}


def _attribute_read(node: ast.AST, path: Path) -> str | None:
    """``<...>shared.field`` anywhere, ``self.field`` in the state's own module."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
        return None
    base = node.value
    tail = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
    return node.attr if tail == "shared" or (tail == "self" and path == STATE_MODULE) else None


def _saved_state_read(node: ast.AST) -> str | None:
    """``state["field"]`` or ``state.get("field")``: a saved ``state.json`` read back."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        receiver, key = node.value, node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        receiver, key = node.func.value, node.args[0]
    else:
        return None
    named_state = isinstance(receiver, ast.Name) and receiver.id == "state"
    return key.value if named_state and isinstance(key, ast.Constant) and isinstance(key.value, str) else None


def _reads(path: Path) -> set[str]:
    nodes = ast.walk(ast.parse(path.read_text(encoding="utf-8")))
    return {name for node in nodes for name in (_attribute_read(node, path), _saved_state_read(node)) if name}


def test_every_field_is_read_somewhere_in_the_package() -> None:
    fields = set(SharedState.model_fields)
    read: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        read |= _reads(path) & fields
    unread = sorted(fields - read - set(UNREAD))
    assert not unread, f"written but never read: {unread} (read them, or retire them: RETIRED_FIELDS)"
    assert set(UNREAD) <= fields and not set(UNREAD) & read  # an exemption goes once its field is read


def test_a_state_json_from_before_loads_without_the_retired_fields() -> None:
    old = {"instruction": "t", "platform": "android", "progress_summary": "", "error_flag_plan": True,
           "last_scripter_success": None, "plan": ["a"], "step_number": 3, "previous_formatted_device_state": "x",
           "current_activity_name": ".Main", "visited_packages": ["p"], "focused_text": "", "last_thought": "t",
           "answer": "done", "finished": True, "success": True}
    state = SharedState.model_validate(old)
    assert state.plan == ["a"] and not RETIRED_FIELDS & set(state.model_dump())
    assert RETIRED_FIELDS <= set(old) and not RETIRED_FIELDS & set(SharedState.model_fields)


def test_the_facts_load_and_update_under_their_older_name() -> None:
    older = SharedState.model_validate({"memory": ["kept before"], "fast_memory": ["kept after"]})
    assert older.fast_memory == ["kept before", "kept after"]
    updated = apply_update(older, {"memory": "a tool's fact"})  # the remember tool's state_update
    assert updated.fast_memory == ["kept before", "kept after", "a tool's fact"]
    assert "memory" not in older.model_dump()


def test_an_update_naming_a_retired_field_is_still_a_mistake() -> None:
    with pytest.raises(KeyError):
        apply_update(SharedState(), {"error_flag_plan": True})


def test_other_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError) as info:
        SharedState.model_validate({"typo": 1})
    assert [e["loc"] for e in info.value.errors()] == [("typo",)]
