"""bench/prompt.py's comparison with DroidRun: our step split into system / history / user / reply
schema, the schema counted as the compact JSON the endpoint is sent, our first call on a real dump,
and (when its throwaway venv exists) DroidRun's step rendered by its own code. A whitespace word
count stands in for the tokenizer."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.unit.llm.test_prompt_bench import load_bench
from ufo_mobile.core.llm.wire import json_schema_format
from ufo_mobile.core.memory.messages import ChatMessage, ImagePart, TextPart

ROOT = Path(__file__).resolve().parents[3]
DUMPS = ROOT.parent / "shared" / "data" / "ui_dumps"


def words(text: str) -> int:
    return len(text.split())


def test_the_schema_is_counted_as_the_compact_json_each_call_sends() -> None:
    bench = load_bench()
    step = sys.modules["_droidrun_step"]
    model = bench.demo_model(words, None)
    assert len(model.parts) == len(model.schemas) == 4
    for parts, schema in zip(model.parts, model.schemas, strict=True):
        assert schema is not None  # the demo's calls carry the reply schema
        text = step.schema_text(schema)
        assert json.loads(text) == json_schema_format(schema)["json_schema"]["schema"]
        assert text == json.dumps(json.loads(text), separators=(",", ":"))  # no spaces between items
        assert parts.schema == words(text) > 0
    assert step.schema_text(None) == ""


def test_our_step_is_split_into_system_history_and_the_current_message() -> None:
    load_bench()
    step = sys.modules["_droidrun_step"]
    reply = {"observation": "a list", "thought": "tap it", "actions": [{"name": "click", "args": {"index": 2}}]}
    messages = [
        ChatMessage(role="system", content="one two three"),
        ChatMessage(role="assistant", content=json.dumps(reply)),
        ChatMessage(role="user", content="Turn 1: tapped\nthen a new screen"),
        ChatMessage(role="user", content=[TextPart(text="four five"), ImagePart(data=b"", label="shot")]),
    ]
    parts = step.our_parts(messages, None, words)
    assert (parts.system, parts.user, parts.schema) == (3, 2, 0)  # the picture is not text
    assert parts.history == words(json.dumps(reply)) + 7
    assert parts.total == parts.system + parts.history + parts.user
    assert step.turns_of(messages) == [{"thought": "a list tap it", "calls": [{"tool": "click", "args": {"index": 2}}],
                                        "results": ["Turn 1: tapped"]}]


def test_the_demo_screens_go_to_droidrun_with_their_earlier_turns() -> None:
    model = load_bench().demo_model(words, None)
    assert [len(screen["turns"]) for screen in model.screens] == [0, 1, 2, 3]
    assert all(screen["dump"].lstrip().startswith("<") for screen in model.screens)


@pytest.mark.skipif(not DUMPS.is_dir(), reason=f"the real dumps are not at {DUMPS}")
def test_our_first_call_on_a_real_dump_shows_that_dump() -> None:
    load_bench()
    real = sys.modules["_real_screens"]
    dump = sorted(DUMPS.glob("*.xml"))[0]
    first = real.first_step(load_bench().DEMO, dump)
    driver = real.ScreenDriver(first.xml)
    assert driver.package and driver.package in first.messages[-1].text()
    assert first.schema is not None


VENV = Path("/tmp/ufo_mobile_bench_droidrun_full")


@pytest.mark.skipif(not (VENV / "bin" / "python").is_file(), reason=f"DroidRun's prompt venv is not at {VENV}")
def test_droidruns_worker_renders_a_first_and_a_later_step() -> None:
    model = load_bench().demo_model(words, None)
    step = sys.modules["_droidrun_step"]
    runs = [{"goal": model.request, "steps": model.screens[:2]}]
    first, later = step.droidrun_parts(VENV / "bin" / "python", runs, words)[0]
    assert first.system == later.system > 0 and first.schema == later.schema == 0
    assert first.history == 0 < later.history and first.user > 0
