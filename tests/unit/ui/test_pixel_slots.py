"""The process-wide bound on screens holding full-size pixels (``ui/pixel_slots.py``): a decode takes
a working slot, given back when the work ends, whatever happens in it; pixels kept between two pieces
of work take a kept slot, or are let go when none is free; a wait for a slot gives up rather than
hold a step up for good; pictures already made take no slot."""

from __future__ import annotations

import gc
import os
import sys
import threading

import pytest
from PIL import Image, ImageDraw

from ufo_mobile.core.ui import build_ui_state
from ufo_mobile.core.ui import screen_images as screen_images_module
from ufo_mobile.core.ui.pixel_slots import SLOTS, PixelSlots
from ufo_mobile.core.ui.png import encode_png
from ufo_mobile.core.ui.screen_images import ScreenImages
from ufo_mobile.errors import UIParseError

SCREEN = ('<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="p" bounds="[0,0][540,1200]">'
          '<node class="android.widget.Button" package="p" clickable="true" text="OK" bounds="[50,150][490,250]"/>'
          '</node></hierarchy>')


def _images(slots: PixelSlots, shade: int = 240) -> ScreenImages:
    """A small (under the black-check size) screenshot's pictures, bound by ``slots``."""
    image = Image.new("RGB", (540, 1200), (shade, shade, shade))
    ImageDraw.Draw(image).rectangle((50, 150, 490, 250), fill=(200, 220, 240))
    ui = build_ui_state(SCREEN, observation_id="o", screen_size=(540, 1200))
    return ScreenImages(encode_png(image), ui.elements, slots=slots)


def _make_pictures(images: ScreenImages) -> None:
    """What the model phase does (``Observation.make_pictures``): one working block, then release."""
    with images.working():
        try:
            images.model_image((270, 600))
            images.record()
        finally:
            images.release()


def test_pixels_kept_after_the_black_check_are_bounded() -> None:
    slots = PixelSlots(2)
    screens = [_images(slots, 240 - n) for n in range(4)]
    for images in screens:
        assert images.blank() is False  # decodes: the screenshot is small enough to be checked
    assert [images.holds_pixels for images in screens] == [True, True, False, False]
    assert (slots.working, slots.kept) == (0, 2)
    for images in screens:
        _make_pictures(images)  # the ones let go decode again, the kept ones do not
    assert not any(images.holds_pixels for images in screens)
    assert (slots.working, slots.kept, slots.overdrawn) == (0, 0, 0)


def test_a_decode_waits_for_a_working_slot_and_gives_up_rather_than_hang() -> None:
    slots = PixelSlots(1, wait_seconds=0.0)
    first, second = _images(slots), _images(slots, 200)
    with first.working():
        first.decoded()
        assert slots.working == 1
        other = threading.Thread(target=second.decoded)  # another thread: it finds no slot free
        other.start()
        other.join()
    assert slots.overdrawn == 1  # it went on without one instead of waiting for good
    assert slots.most_working == 2 and slots.working == 0


def test_failing_picture_making_gives_its_slot_back(monkeypatch: pytest.MonkeyPatch) -> None:
    slots = PixelSlots(1, wait_seconds=0.0)
    broken = ScreenImages(_images(slots).png[:80], [], slots=slots)  # its header, then cut short
    with pytest.raises(UIParseError):
        _make_pictures(broken)
    images = _images(slots)

    def failing(*args: object) -> None:
        raise RuntimeError("drawing failed")

    monkeypatch.setattr(screen_images_module, "draw_marks", failing)
    with pytest.raises(RuntimeError):
        _make_pictures(images)
    assert (slots.working, slots.kept, slots.overdrawn) == (0, 0, 0)
    monkeypatch.undo()
    _make_pictures(_images(slots))  # a later screen finds the slot free
    assert slots.overdrawn == 0


def test_a_screen_dropped_while_keeping_pixels_gives_its_slot_back() -> None:
    slots = PixelSlots(1)
    images = _images(slots)
    images.blank()
    assert slots.kept == 1
    del images
    gc.collect()
    assert slots.kept == 0


def test_pictures_already_made_take_no_slot() -> None:
    slots = PixelSlots(1, wait_seconds=0.0)
    images = _images(slots)
    _make_pictures(images)
    slots.enter()  # every slot is taken by someone else
    try:
        images.model_image((270, 600))
        images.record()
    finally:
        slots.leave()
    assert slots.overdrawn == 0 and slots.most_working == 1


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux", reason="fork is Linux's here")
def test_a_forked_child_starts_with_every_slot_free() -> None:
    SLOTS.enter()  # held by this process when it forks (as a picture-making thread's would be)
    try:
        child = os.fork()
        if child == 0:  # the child: its slots must all be free
            os._exit(0 if (SLOTS.working, SLOTS.kept) == (0, 0) else 1)
        _, status = os.waitpid(child, 0)
    finally:
        SLOTS.leave()
    assert os.waitstatus_to_exitcode(status) == 0
