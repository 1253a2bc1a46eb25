"""The AutoGLM-Phone format (``model.format: autoglm``): Open-AutoGLM's phone agent model.

It answers its thinking, then one line of pseudo-code, ``do(action="Tap", element=[x, y])`` or
``finish(message="...")`` (often inside ``<think>``/``<answer>`` tags), its points on a 0-999 grid over
the screenshot: the fraction ``x / 1000`` of the width, as Open-AutoGLM's own handler reads it. The
line is read with Python's ``ast`` (literals only, nothing run). ``Take_over`` hands the phone to a
person (TAKEOVER), ``Interact`` asks the user to choose (PENDING), ``Note`` keeps what the model
noted, ``finish`` is FINISH, ``fail`` FAIL (our prompt's addition: the family ends a request it
cannot do with ``finish`` and the reason, which the runtime could not tell from success). ``Type``
types in place of the focused field's text, as Open-AutoGLM's own handler does; ``Double Tap`` and
``Call_API`` have no action here and are refused with the reason, for the model to choose another.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ufo_mobile.core.llm.reply import ActionCall, AgentReply
from ufo_mobile.core.processors.pointing import WAIT_SECONDS, PointingInteraction, to_screen
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import LLMOutputParseError

GRID = 1000  # a point's coordinates are thousandths of the screenshot's width and height (0-999)
_LINE = re.compile(r"((?:do|finish|fail)\(.*\))", re.DOTALL)
_REFUSED = {"Double Tap": "Double Tap is not an action here: tap once, or long press",
            "Call_API": "Call_API is not an action here: keep what you need with Note, and finish with the answer"}


class AutoGLMInteraction(PointingInteraction):
    """The model phase, in the AutoGLM-Phone format."""

    templates_name = "autoglm"
    approval_flag = 'a do(action="Interact") first, your thinking asking for approval'
    action_pattern = r"((?:do|finish|fail)\(.*?\))\s*(?:</answer>|$)"

    def picture_phrase(self, width: int, height: int) -> str:
        return "points on it are on the 0-999 grid, whatever its size"

    def parse_reply(self, text: str, picture: tuple[int, int], screen: tuple[int, int]) -> AgentReply:
        return parse_autoglm(text, screen)


def parse_autoglm(text: str, screen: tuple[int, int]) -> AgentReply:
    """A reply's one ``do(...)`` or ``finish(...)`` line, its points (0-999) mapped to ``screen``.

    Raises:
        LLMOutputParseError: no such line, one that does not parse, or an action this format lacks.
    """
    body = text.split("<answer>", 1)[1].split("</answer>", 1)[0] if "<answer>" in text else text
    found = _LINE.search(body)
    if found is None:
        raise LLMOutputParseError('no do(action=...) or finish(message=...) line', raw=text)
    line = found.group(1).strip()
    thought = " ".join(re.sub(r"</?think>|</?answer>", " ", text[: text.find(line)]).split())
    try:
        call = ast.parse(line.replace("\n", "\\n"), mode="eval").body
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.args:
            raise ValueError("not a call with named arguments")
        args: dict[str, Any] = {str(k.arg): ast.literal_eval(k.value) for k in call.keywords}
    except (SyntaxError, ValueError) as exc:
        raise LLMOutputParseError(f"the action line could not be read: {exc}", raw=text) from None
    if call.func.id in ("finish", "fail"):
        done = MobileAgentStatus.FINISH if call.func.id == "finish" else MobileAgentStatus.FAIL
        return AgentReply(status=done, thought=thought, result=str(args.get("message", "")))
    action = str(args.get("action", ""))
    if action == "Take_over":
        return AgentReply(status=MobileAgentStatus.TAKEOVER, thought=thought,
                          result=str(args.get("message") or thought))
    if action == "Interact":
        return AgentReply(status=MobileAgentStatus.PENDING, thought=thought, result=thought or "Which one?")
    return AgentReply(status=MobileAgentStatus.CONTINUE, thought=thought,
                      actions=[_action(action, args, screen, thought)])


def _action(action: str, args: dict[str, Any], screen: tuple[int, int], thought: str) -> ActionCall:
    if action in ("Tap", "Long Press"):
        x, y = _point(args, "element", screen)
        return ActionCall(name="click_at" if action == "Tap" else "long_press_at", args={"x": x, "y": y})
    if action == "Swipe":
        start, end = _point(args, "start", screen), _point(args, "end", screen)
        return ActionCall(name="swipe", args={"coordinate": list(start), "coordinate2": list(end)})
    if action in ("Type", "Type_Name"):
        return ActionCall(name="type", args={"text": str(args.get("text", "")), "clear": True})
    if action == "Launch":
        return ActionCall(name="open_app", args={"text": str(args.get("app", "")).strip()})
    if action in ("Back", "Home"):
        return ActionCall(name="system_button", args={"button": action.lower()})
    if action == "Wait":
        seconds = re.match(r"\s*(\d+(?:\.\d+)?)", str(args.get("duration", "")))
        return ActionCall(name="wait", args={"duration": float(seconds.group(1)) if seconds else WAIT_SECONDS})
    if action == "Note":
        return ActionCall(name="remember", args={"information": thought or str(args.get("message", ""))})
    raise LLMOutputParseError(_REFUSED.get(action, f"action {action!r} is not one of the phone's"))


def _point(args: dict[str, Any], key: str, screen: tuple[int, int]) -> tuple[int, int]:
    """``args[key]``, [x, y] in thousandths of the screenshot, in screen pixels."""
    value = args.get(key)
    if not (isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, int | float) for v in value)):
        raise LLMOutputParseError(f"{key} must be [x, y] on the 0-999 grid, not {value!r}")
    return to_screen(value[0] / GRID, value[1] / GRID, screen)
