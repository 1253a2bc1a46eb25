"""The argument models of the built-in actions. Unknown arguments are refused.

Coordinates are screen pixels, the space of the control bounds in the screen text, with (0, 0) at
the top left. Durations are seconds.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints, field_validator

from ufo_mobile.core.device.base import KEYCODES, normalize_key

MAX_SWIPE_SECONDS = 10.0
"""The longest swipe the model may ask for."""

_USUAL_BUTTONS = ("back", "home", "enter", "app_switch")
BUTTONS: tuple[str, ...] = (*_USUAL_BUTTONS, *sorted(set(KEYCODES) - set(_USUAL_BUTTONS)))
"""The names ``system_button`` takes (``device.base.KEYCODES``), the usual ones first."""

Index = Annotated[int, Field(description="the control's number in the screen list")]
Expected = Annotated[str | None, Field(
    description="the control's label as you read it; checked, so a wrong number is caught")]
Pixel = Annotated[int, Field(description="screen pixels")]
Point = Annotated[list[int], Field(min_length=2, max_length=2, description="[x, y] in screen pixels")]
NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClickArgs(Args):
    index: Index
    text: Expected = None


class PointArgs(Args):
    x: Pixel
    y: Pixel


class AreaArgs(Args):
    x1: Pixel
    y1: Pixel
    x2: Pixel
    y2: Pixel


class TypeArgs(Args):
    text: str = Field(description="typed exactly as given")
    index: int | None = Field(default=None, description="the field to tap first; none = the focused field")
    clear: bool = Field(default=False, description="replace the field's text instead of appending")


class TypeSecretArgs(Args):
    secret_id: NonEmpty = Field(description="one of the available secret ids (never the value)")
    index: int | None = Field(default=None, description="the field to tap first; none = the focused field")


class SwipeArgs(Args):
    coordinate: Point
    coordinate2: Point
    duration: float = Field(default=1.0, gt=0, le=MAX_SWIPE_SECONDS, description="seconds")


class ScrollArgs(Args):
    direction: Literal["up", "down", "left", "right"] = Field(description="where the content to reveal is")
    index: int | None = Field(default=None, description="the scrollable control; none = the whole screen")


class SystemButtonArgs(Args):
    button: str = Field(description="the button's name", json_schema_extra={"enum": list[JsonValue](BUTTONS)})

    @field_validator("button")
    @classmethod
    def _known(cls, value: str) -> str:
        return normalize_key(value)  # ValueError (a bad argument) for an unknown name


def system_button_args(keys: Collection[str]) -> type[SystemButtonArgs]:
    """``SystemButtonArgs`` for a phone with only ``keys`` (an iPhone's: no back key)."""
    names = [name for name in BUTTONS if name in keys]

    class PhoneButtonArgs(SystemButtonArgs):
        button: str = Field(description="the button's name", json_schema_extra={"enum": list[JsonValue](names)})

        @field_validator("button")
        @classmethod
        def _known(cls, value: str) -> str:
            name = normalize_key(value)
            if name not in names:
                raise ValueError(f"this phone has no {name} key; its keys: {', '.join(names)}")
            return name

    return PhoneButtonArgs


class OpenAppArgs(Args):
    text: NonEmpty = Field(description="the app's label (as under its icon) or its package name")


class WaitArgs(Args):
    duration: float = Field(gt=0, description="seconds (capped by the agent's max_wait_seconds)")


class RememberArgs(Args):
    information: NonEmpty = Field(description="a fact to keep for later steps")


class CompleteArgs(Args):
    success: bool = Field(description="true when the task is done, false when it cannot be done")
    message: NonEmpty = Field(description="the answer or result; or why the task failed")
