"""Run directories written by hand, shaped like the ones a run leaves (see docs/runs.md), so a
test can give any field any text and take any file away."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from PIL import Image, ImageDraw

SCREEN = (1080, 2400)
WIFI_ROW = [0, 252, 1080, 440]  # control 3 of the Settings screen: the row the demo taps


def png(size: tuple[int, int] = SCREEN, color: tuple[int, int, int] = (236, 239, 244)) -> bytes:
    image = Image.new("RGB", size, color)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, size[0], size[1] // 24), fill=(40, 40, 40))  # a status bar
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def controls() -> list[dict[str, Any]]:
    rows = [(1, "text", "android.widget.TextView", "Settings", [0, 84, 1080, 252]),
            (2, "scroll", "androidx.recyclerview.widget.RecyclerView", "", [0, 252, 1080, 2334]),
            (3, "button", "android.widget.LinearLayout", "", WIFI_ROW),
            (4, "text", "android.widget.TextView", "Wi-Fi", [48, 288, 1032, 353])]
    return [{"index": i, "kind": k, "class": c, "text": t, "bounds": b} for i, k, c, t, b in rows]


def step_line(number: int, **overrides: Any) -> dict[str, Any]:
    folder = f"steps/{number:04d}"
    line: dict[str, Any] = {
        "step": number, "agent": "MobileAgent", "state": "CONTINUE", "status": "CONTINUE", "reason": "",
        "observation_id": f"obs-{number}", "current_app": "com.android.settings", "controls": 4,
        "dump_attempts": 1, "dump_refusals": [], "observation_fallback": None, "screenshot_blocked": False,
        "cache": {"hit": 0, "hits": 0, "misses": number}, "thought": f"thought {number}",
        "action": {"name": "click", "args": {"index": 3, "text": "Wi-Fi"}, "confirm": False},
        "result": {"success": True, "summary": "clicked [3] 'Wi-Fi' at (540, 346)"},
        "parse_errors": [], "error": None, "failed_phase": None,
        "timings": {"data_collection": 0.15, "llm_interaction": 0.004, "action_execution": 0.002, "memory_update": 0.0},
        "usage": {"prompt_tokens": 100, "cached_tokens": 0, "completion_tokens": 20, "cost_usd": 0.001, "calls": 1},
        "files": {name.split(".")[0]: f"{folder}/{name}" for name in (
            "screenshot.png", "annotated.png", "controls.json", "screen.txt", "prompt.json", "reply.txt",
            "action.json", "result.json", "timings.json")},
        "write_error": None,
    }
    line.update(overrides)
    return line


def write_step(run_dir: Path, line: dict[str, Any]) -> Path:
    folder = run_dir / "steps" / f"{line['step']:04d}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "screenshot.png").write_bytes(png())
    (folder / "annotated.png").write_bytes(png(color=(250, 250, 250)))
    (folder / "controls.json").write_text(json.dumps(controls()))
    (folder / "screen.txt").write_text("App com.android.settings, screen 1080x2400 px, keyboard hidden.\n"
                                       "3 LinearLayout click\n")
    (folder / "prompt.json").write_text(json.dumps([{"role": "system", "content": "You operate a phone."},
                                                    {"role": "user", "content": "Turn on Wi-Fi"}]))
    (folder / "reply.txt").write_text(json.dumps({"status": line["status"], "thought": line.get("thought")}))
    (folder / "result.json").write_text(json.dumps(line.get("result") or {"success": True, "summary": ""}))
    (folder / "timings.json").write_text(json.dumps(line["timings"]))
    return folder


def make_run(tmp_path: Path, *, steps: int = 2, status: str = "FINISH", reason: str = "Wi-Fi is on.",
             name: str = "run", mode: str = "direct", **result: Any) -> Path:
    """A whole run directory: ``steps`` steps, the last one ending in ``status``."""
    run_dir = tmp_path / name
    run_dir.mkdir()
    lines = [step_line(n) for n in range(1, steps + 1)]
    if lines and status != "RUNNING":
        lines[-1].update(status=status, reason=reason, action=None, result=None)
    for line in lines:
        write_step(run_dir, line)
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    log = [{"agent": "MobileAgent", "step": 0, "from": "NONE", "to": "CONTINUE", "reason": "", "event": "transition"}]
    log += [{"agent": "MobileAgent", "step": x["step"], "from": "CONTINUE", "to": x["status"], "reason": x["reason"],
             "event": "transition"} for x in lines]
    (run_dir / "run.log").write_text("".join(json.dumps(x) + "\n" for x in log))
    data: dict[str, Any] = {
        "run_id": name, "status": status, "task": "Turn on Wi-Fi", "pid": 1, "started_at": "2026-11-22T10:00:00+00:00",
        "settings": {"mode": mode, "model": {"api_key": "[REDACTED]"}},
    }
    if status != "RUNNING":
        data.update(reason=reason, answer=reason if status == "FINISH" else None, steps=steps,
                    prompt_tokens=100 * steps, completion_tokens=20 * steps, cached_tokens=0, cost_usd=0.001 * steps,
                    duration_seconds=1.5, model_calls=steps, interrupted=False, signal=None,
                    outcome="success" if status == "FINISH" else "failed")
    data.update(result)
    (run_dir / "run.json").write_text(json.dumps(data))
    if status == "FAIL":
        (run_dir / "final.png").write_bytes(png(color=(200, 30, 30)))
    return run_dir


def count_opened(monkeypatch: pytest.MonkeyPatch, *modules: ModuleType) -> list[Path]:
    """The screenshot files decoded from now on through ``open_rgb`` (``report.images``) where each
    of ``modules`` calls it, in order."""
    from ufo_mobile.report import images

    opened: list[Path] = []
    open_rgb = images.open_rgb

    def counting(path: Path) -> Image.Image | None:
        opened.append(path)
        return open_rgb(path)

    for module in modules:
        monkeypatch.setattr(module, "open_rgb", counting)
    return opened


def outlines(svg: str, colour: tuple[int, int, int]) -> list[tuple[float, float, float, float]]:
    """The pixels (left, top, right, bottom; inclusive, as Pillow draws a box) whose edges the
    rectangles of ``svg`` stroked in ``colour`` cover: a stroke runs inside its box's edges."""
    found = []
    hex_colour = "#{:02x}{:02x}{:02x}".format(*colour)
    for attrs in re.findall(r"<rect ([^>]*)/>", svg):
        values = dict(re.findall(r'([a-z-]+)="([^"]*)"', attrs))
        if values["stroke"] != hex_colour:
            continue
        x, y, w, h, line = (float(values[k]) for k in ("x", "y", "width", "height", "stroke-width"))
        found.append((x - line / 2, y - line / 2, x + w + line / 2 - 1, y + h + line / 2 - 1))
    return found


def marks_after(html: str, image_class: str) -> str:
    """The SVG of marks laid over the first ``<img class=image_class>`` of ``html`` ("" when none)."""
    found = re.search(rf'<img class="{image_class}"[^>]*>(<svg class="marks"[^>]*>.*?</svg>)?', html)
    assert found is not None, html[:2000]
    return found.group(1) or ""
