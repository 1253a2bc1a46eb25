"""Your own tools keep values between their calls in the shared state's ``custom_variables``: a tool's
``state_update`` merges into it, and its next call reads it, through a whole run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes import FakeDriver
from ufo_mobile.core.session import Session
from ufo_mobile.settings import load_settings

VISIT = "{status: CONTINUE, thought: t, action: {name: count_visits, args: {}}}"


async def test_a_custom_tool_reads_what_its_last_call_kept(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(f"replies: [{VISIT}, {VISIT}, {{status: FINISH, result: counted}}]\n")
    task = tmp_path / "task.yaml"
    task.write_text(f"task: count\nmodel: {{script: s.yaml}}\nlogs: {{dir: {tmp_path / 'logs'}}}\n"
                    "mode: direct\n"
                    "tools:\n  custom:\n    - name: count_visits\n"
                    "      function: tests.unit.tools.custom_tools:count_visits\n")
    result = await Session(load_settings(task, env={}), device=FakeDriver()).run()
    assert result.status == "FINISH", result.reason
    steps = [json.loads(line) for line in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert [s["result"]["summary"] for s in steps if s.get("result")] == ["visit 1", "visit 2"]
    state = json.loads((result.run_dir / "steps" / "0003" / "state.json").read_text())
    assert state["custom_variables"] == {"visits": 2}
