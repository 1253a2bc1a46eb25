"""The run directory's JSON text: laid out for reading, each list item on a line of its own, read
back to the same value."""

from __future__ import annotations

import json
from pathlib import Path

from ufo_mobile.core.trace.json_text import DEPTH, dumps

CONTROLS = [{"index": 1, "text": "Wi-Fi, \"on\"\n}, {", "bounds": [0, 252, 1080, 440]},
            {"index": 2, "text": "Bluetooth", "bounds": [0, 440, 1080, 628]}]


def test_the_text_reads_back_to_the_same_value() -> None:
    values = [CONTROLS, {"run_id": "r", "settings": {"model": {"retry": {"max": 4}, "prices": {}}, "apps": []}},
              {}, [], "é", 1.5, None, [[1, [2]], {"a": [3]}], {"deep": {"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}}]
    for value in values:
        assert json.loads(dumps(value)) == value
        assert json.loads(dumps(value, indent=None)) == value and "\n" not in dumps(value, indent=None)


def test_objects_are_laid_out_by_key_and_list_items_one_a_line() -> None:
    text = dumps({"task": "Turn on Wi-Fi", "controls": CONTROLS})
    lines = text.split("\n")
    assert lines[0] == "{" and lines[1] == '  "task": "Turn on Wi-Fi",' and lines[-1] == "}"
    assert lines[2] == '  "controls": ['
    assert lines[3] == "    " + json.dumps(CONTROLS[0], ensure_ascii=False) + ","  # a control is one line
    assert lines[4] == "    " + json.dumps(CONTROLS[1], ensure_ascii=False)
    assert dumps([]) == "[]" and dumps({}) == "{}" and dumps("é") == '"é"'  # not escaped to ASCII


def test_what_json_cannot_hold_is_written_as_the_run_directory_always_wrote_it() -> None:
    assert json.loads(dumps({"path": Path("/tmp/x"), "png": b"1234", 3: "a"})) == {"path": "/tmp/x",
                                                                                   "png": "<4 bytes>", "3": "a"}
    nested: dict[str, object] = {}
    inner = nested
    for _ in range(DEPTH + 2):
        inner["next"] = {}
        inner = inner["next"]  # type: ignore[assignment]
    assert json.loads(dumps(nested)) == nested  # deeper than DEPTH: the rest on one line
