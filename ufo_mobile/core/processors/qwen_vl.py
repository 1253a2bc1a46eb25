"""The Qwen-VL mobile-use format (``model.format: qwen-vl``): Qwen2.5-VL's function calling, which
GUI-Owl (Mobile-Agent-v3) also answers in.

The model gets a ``mobile_use`` tool in its system prompt (the screenshot's resolution stated there,
as Qwen's agent cookbooks state it) and answers with its thinking, then
``<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [x, y]}}</tool_call>``,
``coordinate`` in pixels of the picture it saw (sent on its 28-pixel grid: ``pointing.on_grid``).
``terminate`` ends the run: FINISH (``success``) or FAIL (``failure``), its ``text`` the answer or the
reason. ``type`` types in place of the focused field's text.

Qwen3-VL answers the same tool on a fixed grid instead (``model.format: qwen3-vl``): its tool states a
999x999 screen, and a coordinate ``v`` is the fraction ``v / 999`` of the picture's side, as Qwen's
own mobile-agent cookbook maps it back.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ufo_mobile.core.llm.reply import ActionCall, AgentReply
from ufo_mobile.core.processors.pointing import WAIT_SECONDS, PointingInteraction, to_screen
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.core.tools.args import BUTTONS
from ufo_mobile.errors import LLMOutputParseError

_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_BUTTONS = {"Back": "back", "Home": "home", "Menu": "app_switch", "Enter": "enter"}
GRID3 = 999  # Qwen3-VL's coordinates: 0 to 999 across the picture, whatever its size


class QwenVLInteraction(PointingInteraction):
    """The model phase, in the Qwen-VL mobile-use format."""

    templates_name = "qwen_vl"
    approval_flag = "no action from you: end with terminate (failure) saying what needs approval"
    approval_then = ""  # the tool cannot ask: nothing runs
    action_pattern = r"<tool_call>(.*?)</tool_call>"

    def system_values(self, picture: tuple[int, int]) -> dict[str, object]:
        return {"coordinates": f"The screenshot's resolution is {picture[0]}x{picture[1]}: coordinates are its "
                               "pixels, x from the left edge and y from the top edge."}

    def parse_reply(self, text: str, picture: tuple[int, int], screen: tuple[int, int]) -> AgentReply:
        return parse_qwen_vl(text, picture, screen)


class Qwen3VLInteraction(QwenVLInteraction):
    """The model phase, in Qwen3-VL's mobile-use format: the same tool, its coordinates on a 0-999 grid."""

    def system_values(self, picture: tuple[int, int]) -> dict[str, object]:
        return {"coordinates": f"The screen's resolution is {GRID3}x{GRID3}: coordinates are on a grid from 0 at "
                               f"the left and top edges to {GRID3} at the right and bottom edges, whatever the "
                               "screenshot's size."}

    def picture_phrase(self, width: int, height: int) -> str:
        return f"coordinates on it are on the 0-{GRID3} grid, whatever its size"

    def parse_reply(self, text: str, picture: tuple[int, int], screen: tuple[int, int]) -> AgentReply:
        return parse_qwen_vl(text, (GRID3, GRID3), screen)


def parse_qwen_vl(text: str, picture: tuple[int, int], screen: tuple[int, int]) -> AgentReply:
    """A reply with one ``mobile_use`` call, its coordinates mapped from ``picture`` (the size of the
    screenshot the model saw, or Qwen3-VL's 999x999 grid) to ``screen`` (width, height in pixels).

    Raises:
        LLMOutputParseError: no call, more than one, not JSON, or an action this tool does not have.
    """
    calls = _CALL.findall(text)
    if len(calls) != 1:
        raise LLMOutputParseError(f"{len(calls)} <tool_call> blocks; give exactly one", raw=text)
    try:
        call = json.loads(calls[0])
    except json.JSONDecodeError as exc:
        raise LLMOutputParseError(f"the tool call is not JSON: {exc.msg} at character {exc.pos}", raw=text) from None
    if not isinstance(call, dict) or call.get("name") != "mobile_use" or not isinstance(call.get("arguments"), dict):
        raise LLMOutputParseError('the tool call must be {"name": "mobile_use", "arguments": {...}}', raw=text)
    thought = " ".join(_CALL.sub(" ", text).split())
    args: dict[str, Any] = call["arguments"]
    action = args.get("action")
    if action == "terminate":
        status = args.get("status")
        if status not in ("success", "failure"):
            raise LLMOutputParseError('terminate needs "status": "success" or "failure"', raw=text)
        result = str(args.get("text") or "").strip() or thought
        done = MobileAgentStatus.FINISH if status == "success" else MobileAgentStatus.FAIL
        return AgentReply(status=done, thought=thought, result=result)
    return AgentReply(status=MobileAgentStatus.CONTINUE, thought=thought,
                      actions=[_action(str(action), args, picture, screen)])


def _action(action: str, args: dict[str, Any], picture: tuple[int, int], screen: tuple[int, int]) -> ActionCall:
    if action in ("click", "long_press"):
        x, y = _point(args, "coordinate", picture, screen)
        return ActionCall(name="click_at" if action == "click" else "long_press_at", args={"x": x, "y": y})
    if action == "swipe":
        start, end = _point(args, "coordinate", picture, screen), _point(args, "coordinate2", picture, screen)
        return ActionCall(name="swipe", args={"coordinate": list(start), "coordinate2": list(end)})
    if action == "type":
        return ActionCall(name="type", args={"text": str(args.get("text", "")), "clear": True})
    if action == "open":
        return ActionCall(name="open_app", args={"text": str(args.get("text", "")).strip()})
    if action == "system_button":
        button = _BUTTONS.get(str(args.get("button")))
        if button is None:
            raise LLMOutputParseError(f"button {args.get('button')!r}: one of {', '.join(_BUTTONS)}")
        return ActionCall(name="system_button", args={"button": button})
    if action == "key":
        key = str(args.get("text", "")).strip().lower().removeprefix("keycode_")
        if key not in BUTTONS:
            raise LLMOutputParseError(f"key {args.get('text')!r} is not a key of this phone")
        return ActionCall(name="system_button", args={"button": key})
    if action == "wait":
        seconds = args.get("time", WAIT_SECONDS)
        return ActionCall(name="wait", args={"duration": seconds if isinstance(seconds, int | float) else WAIT_SECONDS})
    raise LLMOutputParseError(f"action {action!r} is not one of mobile_use's")


def _point(args: dict[str, Any], key: str, picture: tuple[int, int], screen: tuple[int, int]) -> tuple[int, int]:
    """``args[key]``, an (x, y) in pixels of the picture, in screen pixels."""
    value = args.get(key)
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) for v in value)):
        raise LLMOutputParseError(f"{key} must be [x, y] in pixels of the screenshot, not {value!r}")
    return to_screen(value[0] / picture[0], value[1] / picture[1], screen)
