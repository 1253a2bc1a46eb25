"""The pictures of an observation are made once: the screenshot decoded once and marked once for the
model and the run directory alike, all before the model is asked, and the full-size pixels let go
then; an unchanged screen seen again from the control cache reuses them (nothing decoded, drawn or
encoded again); the report at the end of the run uses the run's own small copies (no full-size
screenshot decoded again) and shows the same figures it makes from the files alone."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from tests.fakes import FakeDriver
from tests.unit.report.fake_runs import count_opened
from ufo_mobile.core.llm.base import Completion
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors import data_collection
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.processors.data_collection import DataCollection
from ufo_mobile.core.session import Session
from ufo_mobile.core.session.result import RunResult
from ufo_mobile.core.ui import screen_images
from ufo_mobile.core.ui.png import encode_png
from ufo_mobile.report import figures, images, render_report
from ufo_mobile.settings import LogSettings, ModelSettings, PerceptionSettings, Settings, TaskSettings


def _ctx(step: int = 1) -> StepContext:
    return StepContext(run_id="r", step=step, agent_name="A", request="x", shared=SharedState())


def _screenshot() -> bytes:
    image = Image.new("RGB", (1080, 2400), (245, 245, 245))
    ImageDraw.Draw(image).rectangle((0, 200, 1080, 400), fill=(200, 220, 240))
    return encode_png(image)


TAP_THEN_FINISH = [{"status": "CONTINUE", "thought": "t", "action": {"name": "click", "args": {"index": 1}}},
                   {"status": "FINISH", "thought": "done", "result": "ok"}]


async def _run(tmp_path: Path, model: ScriptedModel) -> RunResult:
    """A whole run, with its run directory and report, of ``model`` on a phone showing ``_screenshot``."""
    driver = FakeDriver()
    driver._png = _screenshot()
    settings = Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("unused.yaml")),
                        logs=LogSettings(dir=tmp_path))
    return await Session(settings, device=driver, model=model).run()


class Counted:
    """Counts the calls of the image work ``ScreenImages`` does."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = {"decode": 0, "draw_marks": 0, "jpeg": 0}
        for name in self.calls:
            monkeypatch.setattr(screen_images, name, self._counting(name, getattr(screen_images, name)))

    def _counting(self, name: str, fn: object) -> object:
        def wrapper(*args: object, **kwargs: object) -> object:
            self.calls[name] += 1
            return fn(*args, **kwargs)  # type: ignore[operator]
        return wrapper


async def test_a_cached_observation_of_an_unchanged_screen_is_not_drawn_or_encoded_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    counted = Counted(monkeypatch)
    driver = FakeDriver()
    driver._png = _screenshot()
    phase = DataCollection(Phone(driver, clock=lambda: 0.0, cache_ttl=60), PerceptionSettings())  # no real time
    first, second = _ctx(1), _ctx(2)
    await phase.run(first)
    assert counted.calls == {"decode": 1, "draw_marks": 0, "jpeg": 0}  # made when asked for
    assert first.observation is not None and first.observation.model_image is not None  # a model that reads them
    assert counted.calls == {"decode": 1, "draw_marks": 1, "jpeg": 1}
    await phase.run(second)  # the control cache hits and the screenshot is the same bytes
    assert second.cache["hit"] == 1
    assert first.observation is not None and second.observation is not None
    assert second.observation.images is first.observation.images
    assert second.observation.model_image is first.observation.model_image
    assert counted.calls == {"decode": 1, "draw_marks": 1, "jpeg": 1}
    driver._png = encode_png(Image.new("RGB", (1080, 2400), (10, 200, 30)))  # the screen changed
    third = _ctx(3)
    await phase.run(third)
    assert third.observation is not None and third.observation.images is not first.observation.images
    assert counted.calls["decode"] == 2


async def test_a_step_marks_its_screenshot_once_for_the_model_and_the_run_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counted = Counted(monkeypatch)
    driver = FakeDriver()
    driver._png = _screenshot()
    finish = {"status": "FINISH", "thought": "done", "result": "ok"}
    settings = Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("unused.yaml")),
                        logs=LogSettings(dir=tmp_path))
    result = await Session(settings, device=driver, model=ScriptedModel(Script(replies=[finish]))).run()
    assert result.status == "FINISH"
    # one decode and one drawing; encoded: annotated.jpg, the report's thumbnail and the clean copy
    # (a scripted model reads no pixels: no picture is made for it)
    assert counted.calls == {"decode": 1, "draw_marks": 1, "jpeg": 3}
    with Image.open(result.run_dir / "steps" / "0001" / "annotated.jpg") as annotated:
        assert annotated.format == "JPEG" and annotated.size == (540, 1200)  # the working picture
    assert (result.run_dir / "report.html").is_file()


class Looking(ScriptedModel):
    """A scripted model that reads pixels and notes, at each call, whether any screen observed so far
    still holds its full-size pixels, and how many record pictures (JPEGs) were made by then."""

    reads_images = True

    def __init__(self, script: Script, screens: list[screen_images.ScreenImages], counted: Counted) -> None:
        super().__init__(script)
        self.screens, self.counted = screens, counted
        self.seen: list[tuple[bool, int]] = []

    async def complete(self, messages: Sequence[ChatMessage], *, schema: dict[str, Any] | None = None) -> Completion:
        self.seen.append((any(s.holds_pixels for s in self.screens), self.counted.calls["jpeg"]))
        return await super().complete(messages, schema=schema)


async def test_the_record_pictures_are_made_and_the_pixels_dropped_before_the_model_is_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counted = Counted(monkeypatch)
    screens: list[screen_images.ScreenImages] = []

    class Kept(screen_images.ScreenImages):
        def __init__(self, png: bytes, controls: Sequence[Any]) -> None:
            super().__init__(png, controls)
            screens.append(self)

    monkeypatch.setattr(data_collection, "ScreenImages", Kept)
    model = Looking(Script(replies=TAP_THEN_FINISH), screens, counted)
    result = await _run(tmp_path, model)
    assert result.status == "FINISH" and len(screens) == 2
    # at each call: no pixels held, and the model's picture, annotated.jpg, its thumbnail and the
    # clean copy made (four JPEGs a step)
    assert model.seen == [(False, 4), (False, 8)]


async def test_the_report_at_the_end_of_a_run_decodes_no_full_size_screenshot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened = count_opened(monkeypatch, figures, images)  # every decode the report makes
    result = await _run(tmp_path, ScriptedModel(Script(replies=TAP_THEN_FINISH)))
    assert result.status == "FINISH"
    page = (result.run_dir / "report.html").read_text()
    assert 'class="shot after"' in page and page.count('class="before"') == 2  # both figures are there
    assert opened == []  # the before pictures from the kept thumbnails, the after one from the clean copy
    render_report(result.run_dir)  # made again from the run directory alone: the files are read
    assert len(opened) >= 2


async def test_the_report_shows_the_same_pictures_with_or_without_the_runs_thumbnails(tmp_path: Path) -> None:
    result = await _run(tmp_path, ScriptedModel(Script(replies=TAP_THEN_FINISH)))
    assert result.status == "FINISH"
    written = (result.run_dir / "report.html").read_text()  # made at the end of the run, from its thumbnails
    # made again from the run directory alone: the same page, figures, boxes and sizes; only the
    # JPEG bytes of the pictures differ (made from the lossless pixels, or from the files)
    assert _without_pictures(written) == _without_pictures(render_report(result.run_dir))
    assert 'data-highlight="' in written and "data:image/jpeg;base64," in written
    assert 'data-changes="' in written


def _without_pictures(page: str) -> str:
    return re.sub(r"data:image/jpeg;base64,[A-Za-z0-9+/=]+", "data:image/jpeg", page)


def test_a_thumbnail_stands_for_its_file_only_while_the_file_is_unchanged(tmp_path: Path) -> None:
    from ufo_mobile.core.trace.writer import RunWriter
    from ufo_mobile.report.images import picture

    writer = RunWriter(tmp_path / "run")
    image = Image.new("RGB", (1080, 2400), (250, 250, 250))
    small, full = io.BytesIO(), io.BytesIO()
    image.resize((324, 720)).save(small, format="JPEG")
    image.save(full, format="JPEG")
    writer.write_file("steps/0001/annotated.jpg", full.getvalue())
    writer.keep_thumbnail("steps/0001/annotated.jpg", small.getvalue(), (1080, 2400))
    writer.close()
    path = tmp_path / "run" / "steps" / "0001" / "annotated.jpg"
    kept = writer.thumbnails["steps/0001/annotated.jpg"]
    assert kept.matches(path)
    from_thumbnail = picture(path, thumbnail=kept)
    assert from_thumbnail is not None and (from_thumbnail.width, from_thumbnail.height) == (324, 720)
    other = io.BytesIO()
    Image.new("RGB", (1080, 2400), (0, 0, 0)).save(other, format="PNG")
    path.write_bytes(other.getvalue())  # changed behind the run's back: the file wins
    assert not kept.matches(path)
    assert picture(path, thumbnail=kept) == picture(path)


@pytest.mark.parametrize("model", [True, False])
def test_picture_making_that_fails_gives_its_pixel_slot_back(monkeypatch: pytest.MonkeyPatch, model: bool) -> None:
    from ufo_mobile.core.device.base import CurrentApp
    from ufo_mobile.core.processors.context import Observation
    from ufo_mobile.core.ui import build_ui_state
    from ufo_mobile.core.ui.pixel_slots import PixelSlots
    from ufo_mobile.errors import UIParseError

    slots = PixelSlots(1, wait_seconds=0.0)
    xml = ('<hierarchy rotation="0"><node class="android.widget.Button" package="p" clickable="true" text="OK" '
           'bounds="[100,300][980,500]"/></hierarchy>')
    ui = build_ui_state(xml, observation_id="o", screen_size=(1080, 2400))

    def observation(png: bytes) -> Observation:
        return Observation("o", png, ui, CurrentApp("p"), [], (1080, 2400), model_image_size=(512, 1139),
                           images=screen_images.ScreenImages(png, ui.elements, slots=slots))

    cut_short = observation(_screenshot()[:200])  # its header, then the pixel data cut short
    if model:
        with pytest.raises(UIParseError):
            cut_short.make_pictures(model=True)
    else:
        cut_short.make_pictures(model=False)  # the record's failure is left for the recorder
    assert (slots.working, slots.kept) == (0, 0)

    def failing(*args: object) -> None:
        raise RuntimeError("drawing failed")

    monkeypatch.setattr(screen_images, "draw_marks", failing)
    drawn = observation(_screenshot())
    if model:
        with pytest.raises(RuntimeError):
            drawn.make_pictures(model=True)
    else:
        drawn.make_pictures(model=False)
    assert (slots.working, slots.kept) == (0, 0) and drawn.images is not None and not drawn.images.holds_pixels
    monkeypatch.undo()
    observation(_screenshot()).make_pictures(model=True)  # the next screen finds the slot free
    assert slots.overdrawn == 0 and slots.most_working == 1
