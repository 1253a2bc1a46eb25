"""The pictures of an observation are made once: the screenshot decoded once and marked once for the
model and the run directory alike; an unchanged screen seen again from the control cache reuses them
(nothing decoded, drawn or encoded again); the report uses the run's own thumbnails and shows exactly
what it would have made from ``annotated.png``."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from tests.fakes import FakeDriver
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.processors.data_collection import DataCollection
from ufo_mobile.core.session import Session
from ufo_mobile.core.ui import screen_images
from ufo_mobile.core.ui.png import encode_png
from ufo_mobile.report import render_report
from ufo_mobile.settings import LogSettings, ModelSettings, PerceptionSettings, Settings, TaskSettings


def _ctx(step: int = 1) -> StepContext:
    return StepContext(run_id="r", step=step, agent_name="A", request="x", shared=SharedState())


def _screenshot() -> bytes:
    image = Image.new("RGB", (1080, 2400), (245, 245, 245))
    ImageDraw.Draw(image).rectangle((0, 200, 1080, 400), fill=(200, 220, 240))
    return encode_png(image)


class Counted:
    """Counts the calls of the image work ``ScreenImages`` does."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = {"decode": 0, "draw_marks": 0, "encode_png": 0}
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
    assert counted.calls == {"decode": 1, "draw_marks": 0, "encode_png": 0}  # the pictures wait to be asked for
    assert first.observation is not None and first.observation.model_image is not None  # a model that reads them
    assert counted.calls == {"decode": 1, "draw_marks": 1, "encode_png": 1}
    await phase.run(second)  # the control cache hits and the screenshot is the same bytes
    assert second.cache["hit"] == 1
    assert first.observation is not None and second.observation is not None
    assert second.observation.images is first.observation.images
    assert second.observation.model_image is first.observation.model_image
    assert counted.calls == {"decode": 1, "draw_marks": 1, "encode_png": 1}
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
    # one decode and one drawing; encoded: annotated.png and the report's thumbnail (a scripted model
    # reads no pixels: no picture is made for it)
    assert counted.calls == {"decode": 1, "draw_marks": 1, "encode_png": 2}
    with Image.open(result.run_dir / "steps" / "0001" / "annotated.png") as annotated:
        assert annotated.size == (1080, 2400)
    assert (result.run_dir / "report.html").is_file()


async def test_the_report_shows_the_same_pictures_with_or_without_the_runs_thumbnails(tmp_path: Path) -> None:
    driver = FakeDriver()
    driver._png = _screenshot()
    tap = {"status": "CONTINUE", "thought": "t", "action": {"name": "click", "args": {"index": 1}}}
    finish = {"status": "FINISH", "thought": "done", "result": "ok"}
    settings = Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("unused.yaml")),
                        logs=LogSettings(dir=tmp_path))
    session = Session(settings, device=driver, model=ScriptedModel(Script(replies=[tap, finish])))
    result = await session.run()
    assert result.status == "FINISH"
    written = (result.run_dir / "report.html").read_text()  # made at the end of the run, from its thumbnails
    assert written == render_report(result.run_dir)  # made again from the run directory alone
    assert 'data-highlight="' in written and "data:image/jpeg;base64," in written


def test_a_thumbnail_stands_for_its_file_only_while_the_file_is_unchanged(tmp_path: Path) -> None:
    from ufo_mobile.core.trace.writer import RunWriter
    from ufo_mobile.report.images import picture

    writer = RunWriter(tmp_path / "run")
    image = Image.new("RGB", (1080, 2400), (250, 250, 250))
    small = image.resize((324, 720))
    writer.write_later("steps/0001/annotated.png", lambda: encode_png(image),
                       thumbnail=lambda: (encode_png(small), (1080, 2400)))
    writer.flush()
    writer.close()
    path = tmp_path / "run" / "steps" / "0001" / "annotated.png"
    kept = writer.thumbnails["steps/0001/annotated.png"]
    assert kept.matches(path)
    from_thumbnail = picture(path, thumbnail=kept)
    assert from_thumbnail is not None and (from_thumbnail.width, from_thumbnail.height) == (324, 720)
    other = io.BytesIO()
    Image.new("RGB", (1080, 2400), (0, 0, 0)).save(other, format="PNG")
    path.write_bytes(other.getvalue())  # changed behind the run's back: the file wins
    assert not kept.matches(path)
    assert picture(path, thumbnail=kept) == picture(path)
