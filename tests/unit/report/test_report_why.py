"""The report answers "why": every action's screen before and after with what changed boxed, each a
link to its full-size file; the plan, memory and subgoals as fields; a legend of the colours; a
timeline of when each step ran, which agent took it, and its tokens and cost."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from tests.unit.report.fake_runs import count_opened, make_run, marks_after, outlines, png
from tests.unit.test_cli_runs import DEMO, only_run_dir, run_cli
from ufo_mobile.core.trace.writer import Thumbnail
from ufo_mobile.core.ui.annotate import KIND_COLORS
from ufo_mobile.core.ui.screen_images import ScreenImages
from ufo_mobile.report import figures, render_report
from ufo_mobile.report.images import CHANGED

CHANGE = (100, 600, 500, 900)  # where step 2's screen differs from step 1's


def _figures(page: str, number: int) -> str:
    start = page.index(f'id="step-{number}"')
    end = page.find('<article class="step"', start + 1)
    return page[start:end if end > 0 else len(page)]


def _after_of(step: str) -> dict[str, str]:
    found = re.search(r'<figure class="shot after[^"]*" data-after="([^"]*)"(?: data-changes="([0-9]*)")?', step)
    assert found is not None, step[:2000]
    return {"after": found.group(1), "changes": found.group(2) or ""}


def _changed_screen(run_dir: Path, number: int) -> None:
    image = Image.open(io.BytesIO(png())).convert("RGB")
    ImageDraw.Draw(image).rectangle((CHANGE[0], CHANGE[1], CHANGE[2] - 1, CHANGE[3] - 1), fill=(10, 120, 10))
    image.save(run_dir / "steps" / f"{number:04d}" / "screenshot.png")


def test_each_action_has_the_screen_after_it_with_the_change_boxed(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=3)
    _changed_screen(run_dir, 2)
    page = render_report(run_dir)
    first, second, last = (_figures(page, n) for n in (1, 2, 3))
    assert _after_of(first) == {"after": "steps/0002/screenshot.png", "changes": "1"}
    assert _after_of(second) == {"after": "steps/0003/screenshot.png", "changes": "1"}  # and back again
    assert 'class="shot after' not in last  # FINISH: no action, nothing after
    _boxed_around_the_change(first)
    assert "the cyan box marks what changed" in first
    for step, number in ((first, 1), (second, 2), (last, 3)):  # the full-size image, one click away
        assert f'href="steps/{number:04d}/annotated.png"' in step


def _boxed_around_the_change(step: str) -> None:
    """The step's after picture has a cyan box laid over it around ``CHANGE`` (an outline, not a
    fill), its pixels untouched."""
    found = re.search(r'<img class="after" src="data:image/jpeg;base64,([^"]+)" width="([0-9]+)"', step)
    assert found is not None
    after = Image.open(io.BytesIO(base64.b64decode(found.group(1)))).convert("RGB")
    assert after.width == int(found.group(2))
    scale = after.width / 1080
    marks = marks_after(step, "after")
    assert 'fill="none"' in marks
    ((left, top, right, bottom),) = outlines(marks, CHANGED)
    want = [v * scale for v in CHANGE]
    assert abs(left - want[0]) <= 3 and abs(top - want[1]) <= 3, (left, top, want)
    assert abs(right + 1 - want[2]) <= 3 and abs(bottom + 1 - want[3]) <= 3, (right, bottom, want)
    edge = after.getpixel((round((left + right) / 2), round(top)))
    assert not all(abs(a - b) < 60 for a, b in zip(edge, CHANGED, strict=True)), edge  # not drawn into the pixels


def _kept_copies(run_dir: Path, numbers: tuple[int, ...]) -> dict[str, Thumbnail]:
    """The small clean copies a run keeps of these steps' screenshots (``RunWriter.thumbnails``)."""
    kept = {}
    for number in numbers:
        path = run_dir / "steps" / f"{number:04d}" / "screenshot.png"
        record = ScreenImages(path.read_bytes(), []).record(annotated=False)
        stat = path.stat()
        kept[path.relative_to(run_dir).as_posix()] = Thumbnail(record.clean, record.size, stat.st_size,
                                                               stat.st_mtime_ns)
    return kept


def test_the_after_screen_and_its_changes_come_from_the_runs_small_copies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = make_run(tmp_path, steps=3)
    _changed_screen(run_dir, 2)
    opened = count_opened(monkeypatch, figures)  # the figures' own decodes
    kept = _kept_copies(run_dir, (1, 2))  # none kept for step 3's
    page = render_report(run_dir, thumbnails=kept)
    first, second = _figures(page, 1), _figures(page, 2)
    assert _after_of(first) == {"after": "steps/0002/screenshot.png", "changes": "1"}
    # a small copy beside a decoded file: brought to one size and compared
    assert _after_of(second) == {"after": "steps/0003/screenshot.png", "changes": "1"}
    _boxed_around_the_change(first)
    assert opened == [run_dir / "steps" / "0003" / "screenshot.png"]  # the only screenshot without a copy
    # the kept copy is the after picture as it is: not decoded, drawn on and encoded again
    assert f'src="data:image/jpeg;base64,{base64.b64encode(kept["steps/0002/screenshot.png"].jpeg).decode()}"' in first
    (run_dir / "steps" / "0002" / "screenshot.png").write_bytes(png())  # changed since: the file wins
    again = render_report(run_dir, thumbnails=kept)
    assert _after_of(_figures(again, 1)) == {"after": "steps/0002/screenshot.png", "changes": "0"}


def test_an_action_that_changed_nothing_says_so(tmp_path: Path) -> None:
    page = render_report(make_run(tmp_path, steps=2))
    first = _figures(page, 1)
    assert _after_of(first) == {"after": "steps/0002/screenshot.png", "changes": "0"}
    assert "nothing changed on the screen" in first


def test_screens_of_different_sizes_are_shown_without_a_diff(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=2)
    (run_dir / "steps" / "0002" / "screenshot.png").write_bytes(png((2400, 1080)))  # the phone turned
    first = _figures(render_report(run_dir), 1)
    assert _after_of(first) == {"after": "steps/0002/screenshot.png", "changes": ""}
    assert "the screens differ in size (1080x2400 before, 2400x1080 after: rotated?): not compared" in first


def test_the_last_action_of_a_failed_run_is_followed_by_its_final_screen(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=2, status="FAIL", reason="the switch did not move")
    lines = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    lines[-1].update(action={"name": "click", "args": {"index": 3}}, result={"success": False, "summary": "no"})
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    last = _figures(render_report(run_dir), 2)
    assert _after_of(last)["after"] == "final.png" and "final.png, the screen when the run ended" in last


def test_a_run_cut_off_after_an_action_says_it_has_no_screen_after(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=2, status="FAIL", reason="cut off", cut_off=True)
    (run_dir / "final.png").unlink()
    lines = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    lines[-1].update(action={"name": "click", "args": {"index": 3}}, result={"success": True, "summary": "ok"})
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    last = _figures(render_report(run_dir), 2)
    assert _after_of(last) == {"after": "", "changes": ""}
    assert "the run stopped before the screen after this action was recorded" in last


def test_a_step_reusing_the_observation_before_the_action_is_not_its_after(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=3)
    lines = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    lines[1]["observation_id"] = lines[0]["observation_id"]  # step 2 saw step 1's screen again (a cache hit)
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert _after_of(_figures(render_report(run_dir), 1))["after"] == "steps/0003/screenshot.png"


def _reasoning_run(tmp_path: Path) -> Path:
    run_dir = make_run(tmp_path, steps=3, mode="reasoning")
    lines = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    lines[0].update(agent="Manager", status="ASSIGN", thought=None, action=None, result=None,
                    reason="action: Open Wi-Fi")
    lines[1].update(agent="Executor")
    lines[2].update(agent="Manager")
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (run_dir / "steps" / "0001" / "reply.txt").write_text(
        "<thought>Wi-Fi is in Settings.</thought>\n<add_memory>The network is HomeNet.</add_memory>\n"
        "<plan>\n1. Open Wi-Fi\n2. Switch Wi-Fi on\n</plan>\n")
    memory = ["The network is HomeNet."]
    states = [
        {"plan": ["Open Wi-Fi", "Switch Wi-Fi on"], "manager_memory": memory, "current_subgoal": "Open Wi-Fi",
         "step_records": [{"step": 1, "subgoal": ""}]},
        {"plan": ["Open Wi-Fi", "Switch Wi-Fi on"], "manager_memory": memory, "current_subgoal": "Open Wi-Fi",
         "step_records": [{"step": 2, "subgoal": "Open Wi-Fi"}]},
        {"plan": ["Switch Wi-Fi on"], "manager_memory": [*memory, "Wi-Fi is on."], "current_subgoal": "",
         "step_records": [{"step": 3, "subgoal": ""}]}]
    for number, state in enumerate(states, start=1):
        (run_dir / "steps" / f"{number:04d}" / "state.json").write_text(json.dumps(state))
    return run_dir


def test_the_managers_plan_memory_and_subgoals_are_fields_of_the_step(tmp_path: Path) -> None:
    page = render_report(_reasoning_run(tmp_path))
    manager, executor, last = (_figures(page, n) for n in (1, 2, 3))
    assert "Thought</th><td><pre class=\"inline thought\">Wi-Fi is in Settings.</pre>" in manager
    assert '<span class="subgoal next">Open Wi-Fi</span>' in manager
    assert '<ol class="plan"><li>Open Wi-Fi</li><li>Switch Wi-Fi on</li></ol>' in manager
    assert '<li class="new">The network is HomeNet. <span class="badge go">new</span></li>' in manager
    assert '<span class="subgoal">Open Wi-Fi</span>' in executor
    assert 'class="plan"' not in executor and 'class="memory"' not in executor  # unchanged: not repeated
    assert '<ol class="plan"><li>Switch Wi-Fi on</li></ol>' in last
    assert "<li>The network is HomeNet.</li>" in last and "Wi-Fi is on. <span" in last


def test_the_legend_names_every_colour_drawn_on_the_screenshots(tmp_path: Path) -> None:
    page = render_report(make_run(tmp_path))
    legend = page[page.index('id="legend"'):page.index("</details>", page.index('id="legend"'))]
    for kind, colour in KIND_COLORS.items():
        assert f"rgb{colour}" in legend and f"kind {kind.value}" in legend
    assert "rgb(255, 0, 200)" in legend and f"rgb{CHANGED}" in legend
    assert page.index('id="legend"') < page.index('id="step-1"')


def test_the_timeline_shows_when_each_step_ran_its_agent_and_its_cost(tmp_path: Path) -> None:
    run_dir = _reasoning_run(tmp_path)
    ends = ["2026-11-22T10:00:01.000000Z", "2026-11-22T10:00:02.500000Z", "2026-11-22T10:00:03.000000Z"]
    agents = ["Manager", "Executor", "Manager"]
    (run_dir / "run.log").write_text("".join(json.dumps(
        {"event": "transition", "agent": a, "step": n, "from": "CONTINUE", "to": "X", "timestamp": t}) + "\n"
        for n, (a, t) in enumerate(zip(agents, ends, strict=True), start=1)))
    page = render_report(run_dir)
    table = page[page.index('<table class="timeline">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'<tr data-step="(\d)"><td>.*?</td><td class="num">([^<]*)<.*?<span class="agent agent-(\d)">'
                      r"([^<]*)</span>", table)
    # each step took 0.156 s (fake_runs' timings): it started that long before its end
    assert rows == [("1", "+844 ms", "0", "Manager"), ("2", "+2.3 s", "1", "Executor"), ("3", "+2.8 s", "0", "Manager")]
    assert table.count('<div class="bar">') == 3
    assert "<code>click(index=3, text=&#x27;Wi-Fi&#x27;)</code>" in table and "action: Open Wi-Fi" in table
    totals = table[table.index('<tr class="totals">'):]
    assert "300 + 60" in totals and "$0.0030" in totals  # three steps of 100 + 20 tokens, $0.001 each
    assert page.index('id="timeline"') < page.index('class="transitions"') < page.index('id="steps"')


def test_a_run_that_ends_with_an_action_keeps_the_screen_after_it(tmp_path: Path) -> None:
    code, out = run_cli("run", str(DEMO), "--mode", "codeact", "--log-dir", str(tmp_path / "codeact"), "--quiet")
    assert code == 0, out
    run_dir = only_run_dir(tmp_path / "codeact")
    assert (run_dir / "final.png").is_file()  # its last step's code called complete(): that step acted
    page = (run_dir / "report.html").read_text()
    steps = page.count('<article class="step"')
    assert page.count('<figure class="shot after" data-after="') == steps  # every step acted, each has its after
    assert _after_of(_figures(page, steps))["after"] == "final.png"
    code, out = run_cli("run", str(DEMO), "--log-dir", str(tmp_path / "direct"), "--quiet")
    assert code == 0, out
    assert not (only_run_dir(tmp_path / "direct") / "final.png").exists()  # it ended with a reply, not an action


def test_a_reasoning_run_counts_its_steps_as_the_terminal_does(tmp_path: Path) -> None:
    run_dir = _reasoning_run(tmp_path)
    data = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**data, "steps": 3, "steps_used": 1}))  # one action, 3 turns
    page = render_report(run_dir)
    assert 'data-steps="3">1 step (3 turns)</span>' in page
    assert "<th>Steps</th><td>1 step (3 turns)</td>" in page
    (tmp_path / "direct").mkdir()
    assert 'data-steps="2">2 steps</span>' in render_report(make_run(tmp_path / "direct"))
