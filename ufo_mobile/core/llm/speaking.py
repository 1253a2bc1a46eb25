"""A scripted JSON reply said as a model of another format says it (the scripted model's ``speaks``).

A task's oracle script is written once, in the runtime's JSON, its controls named by number or
label. A run whose model answers in another format (``model.format``: UI-TARS, Qwen-VL, AutoGLM) or
sees no control list (``perception.source: screenshot``) needs the same replies said the way that
model says them: the point of the control a reply names, on the picture that model is sent (or on
its grid), in that format's syntax. Such a prompt has no list to read a control's number from, so
the scripted model looks at the phone for itself (its ``sight``: the phone's UI tree read through the
driver, numbered as the runtime numbers it), as a model looks at its screenshot.

One JSON action may take more than one turn in another format: typing into a field the reply names
is a tap on the field, then the typing (the formats type into the focused field; a field that has the
focus already is typed into at once); a reply with
several actions is a turn for each. A later turn is said on the screen of its own turn, its control
found again by the label the reply gave it (``text``).

``Move`` is an action in this neutral form; ``say`` writes one in a format. The points go from
screen pixels to the format's coordinates by the inverse of the mapping its reader uses
(``processors/pointing.py``), so a point said here is read back within a pixel.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ufo_mobile.core.ui.state import UIState
from ufo_mobile.errors import LLMError

Sight = Callable[[], Awaitable[UIState]]
"""Reads the phone's screen now (its UI tree, as the runtime would number it)."""

POINT_GRIDS = {"autoglm": 1000, "qwen3-vl": 999}  # formats whose points are on a fixed grid (0..n-1)
PICTURE_FORMATS = frozenset({"ui-tars", "qwen-vl"})  # formats whose points are pixels of the picture
SPOKEN = frozenset({"json", *POINT_GRIDS, *PICTURE_FORMATS})


@dataclass(frozen=True)
class Move:
    """One turn's action, format-neutral: ``kind`` is tap, long_press, type, key, open, wait or end
    (``status`` FINISH, FAIL, PENDING or TAKEOVER, ``text`` the answer or the reason); a tap names its
    control by ``index`` on the screen it was decided on, and by ``label`` for a later turn."""

    kind: str
    index: int | None = None
    label: str | None = None
    point: tuple[int, int] | None = None  # screen pixels, when the reply gave the point itself
    text: str = ""
    clear: bool = False  # a type: in place of the field's text (the pointing formats always type so)
    status: str = ""
    fresh: bool = True  # decided on the screen it is said on (else its control is found by label)


def moves(reply: dict[str, Any], focused: Callable[[int], bool] = lambda index: False) -> list[Move]:
    """The turns a JSON reply (its controls numbered) takes in a format that acts once a turn;
    ``focused`` tells whether a field has the focus already (typing into it needs no tap first).

    Raises:
        LLMError: an action that has no turn in these formats.
    """
    status = str(reply.get("status", "CONTINUE"))
    if status != "CONTINUE":
        return [Move("end", status=status, text=str(reply.get("result") or reply.get("thought") or ""))]
    actions = reply.get("actions") or ([reply["action"]] if reply.get("action") else [])
    found: list[Move] = []
    for action in actions:
        found.extend(_turns(str(action.get("name", "")), dict(action.get("args") or {}), focused))
    return [m if n == 0 else Move(**{**m.__dict__, "fresh": False}) for n, m in enumerate(found)]


def _turns(name: str, args: dict[str, Any], focused: Callable[[int], bool]) -> list[Move]:
    label = str(args["text"]) if name in ("click", "long_press") and args.get("text") else None
    if name in ("click", "long_press"):
        return [Move("tap" if name == "click" else "long_press", index=int(args["index"]), label=label)]
    if name in ("click_at", "long_press_at"):
        kind = "tap" if name == "click_at" else "long_press"
        return [Move(kind, point=(int(args["x"]), int(args["y"])))]
    if name == "type":
        typed = Move("type", text=str(args.get("text", "")), clear=bool(args.get("clear")))
        field = args.get("index")
        return [Move("tap", index=int(field)), typed] if field is not None and not focused(int(field)) else [typed]
    if name == "system_button":
        return [Move("key", text=str(args.get("button", "")))]
    if name == "open_app":
        return [Move("open", text=str(args.get("text", "")))]
    if name == "wait":
        return [Move("wait", text=str(args.get("duration", 2)))]
    raise LLMError(f"the scripted reply's action {name!r} has no turn in a format that points")


def say(fmt: str, move: Move, thought: str, point: tuple[int, int] | None, screen: tuple[int, int],
        picture: tuple[int, int] | None) -> str:
    """``move`` as a model answering in ``fmt`` writes it; ``point`` is its target in screen pixels,
    ``picture`` the size of the screenshot that model is sent.

    Raises:
        LLMError: the format has no way to say it (AutoGLM has no enter key, say).
    """
    where = _coordinates(fmt, point, screen, picture) if point is not None else None
    speak = {"json": _json, "ui-tars": _ui_tars, "qwen-vl": _qwen, "qwen3-vl": _qwen, "autoglm": _autoglm}[fmt]
    text = speak(move, thought, where)
    if text is None:
        what = f"{move.kind} {move.text}".strip() if move.kind != "end" else f"ending {move.status}"
        raise LLMError(f"the {fmt} format has no way to say the scripted reply's {what}")
    return text


def _coordinates(fmt: str, point: tuple[int, int], screen: tuple[int, int],
                 picture: tuple[int, int] | None) -> tuple[int, int]:
    """``point`` (screen pixels) in ``fmt``'s coordinates."""
    if fmt == "json":
        return point
    if fmt in POINT_GRIDS:
        grid = POINT_GRIDS[fmt]
        return tuple(min(grid - 1, round(v * grid / size)) for v, size in zip(point, screen, strict=True))  # type: ignore[return-value]
    if picture is None:
        raise LLMError(f"the {fmt} format points on the screenshot, and the prompt sent none")
    return tuple(min(p - 1, round(v * p / size)) for v, p, size in zip(point, picture, screen, strict=True))  # type: ignore[return-value]


def _json(move: Move, thought: str, where: tuple[int, int] | None) -> str | None:
    names = {"tap": "click_at", "long_press": "long_press_at"}
    if move.kind == "end":
        return json.dumps({"status": move.status, "thought": thought, "result": move.text})
    if move.kind in names and where is not None:
        action = {"name": names[move.kind], "args": {"x": where[0], "y": where[1]}}
    elif move.kind == "type":
        action = {"name": "type", "args": {"text": move.text, "clear": move.clear}}
    elif move.kind == "key":
        action = {"name": "system_button", "args": {"button": move.text}}
    elif move.kind == "open":
        action = {"name": "open_app", "args": {"text": move.text}}
    elif move.kind == "wait":
        action = {"name": "wait", "args": {"duration": float(move.text)}}
    else:
        return None
    return json.dumps({"status": "CONTINUE", "thought": thought, "action": action})


def _ui_tars(move: Move, thought: str, where: tuple[int, int] | None) -> str | None:
    def quoted(text: str) -> str:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"

    line: str | None = None
    if move.kind in ("tap", "long_press") and where is not None:
        line = f"{'click' if move.kind == 'tap' else 'long_press'}(point='<point>{where[0]} {where[1]}</point>')"
    elif move.kind == "type":
        line = f"type(content={quoted(move.text)})"
    elif move.kind == "key":
        line = {"home": "press_home()", "back": "press_back()", "enter": "type(content='\\n')"}.get(move.text)
    elif move.kind == "open":
        line = f"open_app(app_name={quoted(move.text)})"
    elif move.kind == "wait":
        line = "wait()"
    elif move.kind == "end":
        name = {"FINISH": "finished", "FAIL": "infeasible", "PENDING": "call_user"}.get(move.status)
        line = f"{name}(content={quoted(move.text)})" if name else None
    return None if line is None else f"Thought: {thought}\nAction: {line}"


def _qwen(move: Move, thought: str, where: tuple[int, int] | None) -> str | None:
    args: dict[str, Any] | None = None
    if move.kind in ("tap", "long_press") and where is not None:
        args = {"action": "click" if move.kind == "tap" else "long_press", "coordinate": list(where)}
    elif move.kind == "type":
        args = {"action": "type", "text": move.text}
    elif move.kind == "key":
        button = {"back": "Back", "home": "Home", "enter": "Enter", "app_switch": "Menu"}.get(move.text)
        args = {"action": "system_button", "button": button} if button else {"action": "key", "text": move.text}
    elif move.kind == "open":
        args = {"action": "open", "text": move.text}
    elif move.kind == "wait":
        args = {"action": "wait", "time": float(move.text)}
    elif move.kind == "end" and move.status in ("FINISH", "FAIL"):
        args = {"action": "terminate", "status": "success" if move.status == "FINISH" else "failure",
                "text": move.text}
    if args is None:
        return None
    call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
    return f"{thought}\n<tool_call>\n{call}\n</tool_call>"


def _autoglm(move: Move, thought: str, where: tuple[int, int] | None) -> str | None:
    def quoted(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)  # a JSON string is a Python string literal

    line: str | None = None
    if move.kind in ("tap", "long_press") and where is not None:
        line = f'do(action="{"Tap" if move.kind == "tap" else "Long Press"}", element=[{where[0]}, {where[1]}])'
    elif move.kind == "type":
        line = f'do(action="Type", text={quoted(move.text)})'
    elif move.kind == "key" and move.text in ("back", "home"):
        line = f'do(action="{move.text.capitalize()}")'
    elif move.kind == "open":
        line = f'do(action="Launch", app={quoted(move.text)})'
    elif move.kind == "wait":
        line = f'do(action="Wait", duration="{move.text} seconds")'
    elif move.kind == "end":
        line = {"FINISH": f"finish(message={quoted(move.text)})", "FAIL": f"fail(message={quoted(move.text)})",
                "TAKEOVER": f'do(action="Take_over", message={quoted(move.text)})',
                "PENDING": 'do(action="Interact")'}.get(move.status)
    return None if line is None else f"<think>{thought}</think>\n<answer>{line}</answer>"
