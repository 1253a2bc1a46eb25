"""The UI-TARS format (``model.format: ui-tars``): UI-TARS and UI-TARS-1.5's prompt shape and points.

They answer ``Thought: ...`` then ``Action: click(point='<point>x y</point>')``. The reply is read
by the model family's own parser (the ``ui-tars`` package), which gives each point as a fraction of
the picture; ``finished`` is FINISH with its content as the result, ``infeasible`` FAIL with its
reason (our prompt's addition: the family has no way to say a request cannot be done), ``call_user``
asks the user (PENDING). ``type`` types in place of the focused field's text. What every pointing
format shares is in ``pointing.py``.
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

from ufo_mobile.core.llm.reply import ActionCall, AgentReply
from ufo_mobile.core.processors.pointing import SWIPE_SECONDS, WAIT_SECONDS, PointingInteraction, clamp, to_screen
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import LLMOutputParseError

SCROLL_SHARE = 0.25  # a scroll moves the finger this share of the screen from the point
_KEYS = {"press_home": "home", "press_back": "back"}
_ENDINGS = {"finished": MobileAgentStatus.FINISH, "infeasible": MobileAgentStatus.FAIL,
            "call_user": MobileAgentStatus.PENDING}


class UITarsInteraction(PointingInteraction):
    """The model phase, in the UI-TARS format."""

    templates_name = "ui_tars"
    approval_flag = "a call_user() asking for approval first"
    action_pattern = r"Action:\s*(.+)"

    def parse_reply(self, text: str, picture: tuple[int, int], screen: tuple[int, int]) -> AgentReply:
        return parse_ui_tars(text, picture, screen)


def parse_ui_tars(text: str, picture: tuple[int, int], screen: tuple[int, int]) -> AgentReply:
    """A UI-TARS reply read by the ``ui-tars`` package, its points mapped from ``picture`` (the size
    of the screenshot the model saw) to ``screen`` (width, height in pixels).

    Raises:
        LLMOutputParseError: no action, more than one, or one this format does not have.
    """
    from ui_tars.action_parser import parse_action_to_structure_output

    if "Action:" not in text:
        raise LLMOutputParseError('no "Action:" line', raw=text)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the parser prints what it cannot read
            parsed = parse_action_to_structure_output(text, 1000, picture[1], picture[0], model_type="qwen25vl")
    except Exception as exc:  # noqa: BLE001 - whatever the parser trips on, the reply is unreadable
        raise LLMOutputParseError(f"the action could not be read: {type(exc).__name__}", raw=text) from None
    if len(parsed) != 1:
        raise LLMOutputParseError(f"{len(parsed)} actions; give exactly one", raw=text)
    thought = str(parsed[0].get("thought") or "")
    name, inputs = str(parsed[0]["action_type"]), dict(parsed[0]["action_inputs"])
    if name in _ENDINGS:
        result = str(inputs.get("content", "")).strip() or (thought if name != "finished" else "")
        return AgentReply(status=_ENDINGS[name], thought=thought, result=result)
    if name == "type" and not str(inputs.get("content", "")).strip() and re.search(r"content=['\"]\\n", text):
        inputs["content"] = "\n"  # the parser strips a lone new line: it is the enter key, not an empty field
    return AgentReply(status=MobileAgentStatus.CONTINUE, thought=thought, actions=_actions(name, inputs, screen))


def _actions(name: str, inputs: dict[str, Any], screen: tuple[int, int]) -> list[ActionCall]:
    if name == "type":  # in place of the focused field's text; a content ending in a new line is then submitted
        content = str(inputs.get("content", ""))
        text = content.removesuffix("\n")
        typed = [ActionCall(name="type", args={"text": text, "clear": True})] if text or content == "" else []
        return typed + [ActionCall(name="system_button", args={"button": "enter"})] if content.endswith("\n") else typed
    return [_action(name, inputs, screen)]


def _action(name: str, inputs: dict[str, Any], screen: tuple[int, int]) -> ActionCall:
    if name in ("click", "long_press"):
        x, y = _point(inputs, "start_box", screen)
        return ActionCall(name="click_at" if name == "click" else "long_press_at", args={"x": x, "y": y})
    if name == "scroll":
        x, y = _point(inputs, "start_box", screen)
        direction = str(inputs.get("direction", "")).strip().lower()
        moves = {"down": (0, -1), "up": (0, 1), "right": (-1, 0), "left": (1, 0)}  # the finger's way
        if direction not in moves:
            raise LLMOutputParseError(f"scroll direction {direction!r}: one of down, up, right, left")
        dx, dy = moves[direction]
        end = (clamp(x + dx * round(screen[0] * SCROLL_SHARE), screen[0]),
               clamp(y + dy * round(screen[1] * SCROLL_SHARE), screen[1]))
        return ActionCall(name="swipe", args={"coordinate": [x, y], "coordinate2": list(end),
                                              "duration": SWIPE_SECONDS})
    if name in ("drag", "swipe"):
        start, end = _point(inputs, "start_box", screen), _point(inputs, "end_box", screen)
        return ActionCall(name="swipe", args={"coordinate": list(start), "coordinate2": list(end),
                                              "duration": SWIPE_SECONDS})
    if name == "open_app":
        return ActionCall(name="open_app", args={"text": str(inputs.get("app_name", "")).strip()})
    if name in _KEYS:
        return ActionCall(name="system_button", args={"button": _KEYS[name]})
    if name == "wait":
        return ActionCall(name="wait", args={"duration": WAIT_SECONDS})
    raise LLMOutputParseError(f"{name}() is not in the Action Space")


_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?")


def _point(inputs: dict[str, Any], key: str, screen: tuple[int, int]) -> tuple[int, int]:
    """The point ``inputs[key]`` (fractions of the picture, as the parser gives them) in screen pixels."""
    numbers = [float(n) for n in _NUMBERS.findall(str(inputs.get(key, "")))]
    if len(numbers) not in (2, 4):
        raise LLMOutputParseError(f"a point is needed: <point>x y</point>, not {inputs.get(key)!r}")
    return to_screen((numbers[0] + numbers[-2]) / 2, (numbers[1] + numbers[-1]) / 2, screen)
