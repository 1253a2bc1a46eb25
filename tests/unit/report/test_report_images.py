"""Screenshots in the report: the action's target highlighted where it is, images kept small, and the
``report`` command writing the page."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from tests.unit.report.fake_runs import WIFI_ROW, make_run, marks_after, outlines, png, step_line, write_step
from tests.unit.test_cli_runs import DEMO, only_run_dir, run_cli
from ufo_mobile.report import render_report
from ufo_mobile.report.images import HALO, HIGHLIGHT, LONGEST_SIDE, Mark, mark_of, picture
from ufo_mobile.report.overlay import target_marks


def _decode(uri: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB")


def _near(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 60) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=False))


def test_the_target_of_an_action_is_found_from_its_arguments() -> None:
    controls = [{"index": 3, "bounds": WIFI_ROW}, {"index": 4, "bounds": "odd"}]
    assert mark_of({"name": "click", "args": {"index": 3}}, controls) == Mark(box=(0, 252, 1080, 440))
    assert mark_of({"name": "click", "args": {"index": 4}}, controls) is None  # bounds unreadable
    assert mark_of({"name": "click", "args": {"index": 9}}, controls) is None  # no such control
    assert mark_of({"name": "click_at", "args": {"x": 540, "y": 346.4}}, None) == Mark(points=((540, 346),))
    assert mark_of({"name": "click_area", "args": {"x1": 1, "y1": 2, "x2": 3, "y2": 4}}, None) == Mark(box=(1, 2, 3, 4))
    assert mark_of({"name": "swipe", "args": {"coordinate": [500, 1800], "coordinate2": [500, 600]}}, None) == Mark(
        points=((500, 1800), (500, 600)))
    assert mark_of({"name": "open_app", "args": {"text": "Settings"}}, controls) is None
    assert mark_of({"name": "click", "args": {"index": True}}, controls) is None
    assert mark_of(None, controls) is None


def test_the_highlight_is_drawn_on_the_bounds_scaled_to_the_image() -> None:
    marks = target_marks(Mark(box=(100, 200, 500, 400)), 0.5, (540, 1200))
    assert marks.box == (50, 100, 249, 199)
    # the magenta stroke covers the box's own edge pixels, the white halo the pixels around them
    assert outlines(marks.shapes, HIGHLIGHT) == [(50, 100, 249, 199)]
    ((left, top, right, bottom),) = outlines(marks.shapes, HALO)
    assert left < 50 and top < 100 and right > 249 and bottom > 199


def test_touch_points_and_a_swipe_are_rings_and_a_line() -> None:
    marks = target_marks(Mark(points=((500, 1800), (500, 600))), 0.5, (540, 1200))
    assert marks.box is None and marks.shapes.count("<circle") == 4  # a ring and its halo for each point
    assert '<circle cx="250.5" cy="900.5"' in marks.shapes and '<circle cx="250.5" cy="300.5"' in marks.shapes
    assert '<line x1="250.5" y1="900.5" x2="250.5" y2="300.5"' in marks.shapes


def test_the_highlight_follows_the_screen_size_not_the_screenshot_size(tmp_path: Path) -> None:
    shot = tmp_path / "half.png"
    shot.write_bytes(png((540, 1200)))  # a phone that sends screenshots at half its screen size
    drawn = picture(shot, screen_size=(1080, 2400))
    assert drawn is not None and (drawn.width, drawn.height) == (324, 720)
    marks = target_marks(Mark(box=(0, 252, 1080, 440)), drawn.scale, (drawn.width, drawn.height))
    assert marks.box == (0, 76, 323, 131)
    assert outlines(marks.shapes, HIGHLIGHT) == [(0, 76, 323, 131)]


def test_the_step_shows_the_chosen_control_highlighted(tmp_path: Path) -> None:
    page = render_report(make_run(tmp_path, steps=2))
    step = page[page.index('id="step-1"'):page.index('id="step-2"')]
    (uri, box) = re.findall(r'<img class="before" src="(data:image/jpeg;base64,[^"]+)"[^>]*data-highlight="([0-9,]*)"',
                             step)[0]
    assert box == "0,76,323,131"  # control 3, [0,252,1080,440] on a 1080x2400 screen, at 324x720
    marks = marks_after(step, "before")
    assert '<svg class="marks" viewBox="0 0 324 720"' in marks
    assert outlines(marks, HIGHLIGHT) == [(0, 76, 323, 131)]
    image = _decode(uri)
    assert image.size == (324, 720)
    assert not _near(image.getpixel((162, 77)), HIGHLIGHT)  # drawn over the picture, not into its pixels
    assert "the magenta box is the target of the action" in step
    last = page[page.index('id="step-2"'):]
    assert 'data-highlight=""' in last and not marks_after(last, "before")  # FINISH: no action, nothing marked


def test_images_are_downscaled_and_long_text_is_cut(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=1)
    line = step_line(1, thought="t" * 1_000_000)
    folder = write_step(run_dir, line)
    (folder / "annotated.png").write_bytes(png((2160, 4800)))
    (folder / "reply.txt").write_text("r" * 5_000_000)
    (run_dir / "steps.jsonl").write_text(json.dumps(line) + "\n")
    page = render_report(run_dir)
    for uri in re.findall(r'src="(data:image/jpeg;base64,[^"]+)"', page):
        assert max(_decode(uri).size) <= LONGEST_SIDE
    assert "more characters]" in page and "[cut: the file has 5000000 bytes]" in page
    assert len(page.encode()) < 2_000_000


def test_report_writes_the_page_and_names_it_last(tmp_path: Path) -> None:
    code, out = run_cli("run", str(DEMO), "--log-dir", str(tmp_path / "logs"), "--quiet")
    assert code == 0, out
    run_dir = only_run_dir(tmp_path / "logs")
    code, out = run_cli("report", str(run_dir))
    assert code == 0
    lines = [line for line in out.rstrip("\n").split("\n") if not line.startswith("fonts: ")]  # no font here
    assert lines[-1] == f"report: {run_dir / 'report.html'}"
    assert lines[-4].startswith("FINISH after 4 steps")  # the summary is unchanged, above it
    page = (run_dir / "report.html").read_text()
    assert 'data-outcome="FINISH"' in page and page.count('<article class="step"') == 4
    # the size bound: four steps of a real screen in well under a megabyte (about 200 kB)
    assert len(page.encode()) < 600_000
    for uri in re.findall(r'src="(data:image/jpeg;base64,[^"]+)"', page):
        assert max(_decode(uri).size) <= LONGEST_SIDE


@pytest.mark.parametrize(("status", "code"), [("FINISH", 0), ("FAIL", 1)])
def test_report_keeps_its_exit_codes_when_the_page_cannot_be_written(tmp_path: Path, status: str, code: int) -> None:
    run_dir = make_run(tmp_path, status=status)
    (run_dir / "report.html").mkdir()  # something in the way that even root cannot replace
    exit_code, out = run_cli("report", str(run_dir))
    assert exit_code == code
    assert out.rstrip("\n").split("\n")[-1].startswith(f"report: not written: cannot write {run_dir / 'report.html'}")


def test_a_kept_copy_is_embedded_as_it_is_only_when_it_is_a_jpeg(tmp_path: Path) -> None:
    from ufo_mobile.core.trace.writer import Thumbnail

    shot = tmp_path / "annotated.png"
    shot.write_bytes(png())
    stat = shot.stat()
    small = Image.new("RGB", (324, 720), (1, 2, 3))
    for kind in ("JPEG", "PNG"):
        out = io.BytesIO()
        small.save(out, format=kind)
        kept = Thumbnail(out.getvalue(), (1080, 2400), stat.st_size, stat.st_mtime_ns)
        drawn = picture(shot, thumbnail=kept)
        assert drawn is not None and (drawn.width, drawn.height) == (324, 720)
        as_it_is = drawn.uri == "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode()
        assert as_it_is == (kind == "JPEG")  # a PNG copy: the file is decoded and encoded as a JPEG
        assert _decode(drawn.uri).size == (324, 720)
