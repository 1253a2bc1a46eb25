"""What a run ran with, in one line for people: the mode, the phone and its driver, the model.

``describe_setup`` reads the settings as ``run.json`` keeps them (``Settings.model_dump(mode="json")``),
so the terminal's first line (``cli/console.py``) and the report's header say the same thing. A model
server is named by its host only (never its path, query or credentials) and a key never appears.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from ufo_mobile.core.llm.endpoint import host_of
from ufo_mobile.settings.model import reply_format

REPLAY_ONLY = "no model (replay only)"


def describe_setup(settings: Mapping[str, Any], *, model: str | None = None) -> str:
    """``direct · simulated phone (in-process) · scripted model demo_wifi.yaml``; ``model`` replaces
    the model's part (a replay that asks no model says so)."""
    mode = str(settings.get("mode") or "direct")
    device = settings.get("device")
    main = settings.get("model")
    parts = [mode, describe_device(device if isinstance(device, Mapping) else {}),
             model if model is not None else describe_model(main if isinstance(main, Mapping) else {})]
    roles = settings.get("models")
    if model is None and isinstance(roles, Mapping):
        parts += [f"{role}: {describe_model(m)}" for role, m in roles.items()
                  if isinstance(m, Mapping) and m != main]
    return " · ".join(parts)


def setup_of_run(data: Mapping[str, Any]) -> str | None:
    """``describe_setup`` for a ``run.json`` (None when it has no settings); a replay that could not
    hand over to the agent says it asked no model."""
    settings, replay = data.get("settings"), data.get("replay")
    if not isinstance(settings, Mapping):
        return None
    replay_only = isinstance(replay, Mapping) and replay.get("fallback") == "stop"
    return describe_setup(settings, model=REPLAY_ONLY if replay_only else None)


def describe_device(device: Mapping[str, Any]) -> str:
    """``simulated phone (in-process)``, ``adb 127.0.0.1:5555``, ``u2 SERIAL``; a real phone without a
    serial is the only one adb sees."""
    kind = str(device.get("kind") or "sim")
    if kind == "sim":
        return "simulated phone (in-process)"
    serial = device.get("serial")
    if kind == "wda":
        return f"iPhone (WebDriverAgent at {host_of(str(serial)) or serial})"
    return f"{kind} {serial}" if serial else f"{kind} (the only phone adb sees)"


def describe_model(model: Mapping[str, Any]) -> str:
    """``scripted model demo_wifi.yaml``, ``openai gpt-4o``, ``openai_compatible NAME at HOST``,
    ``azure DEPLOYMENT at HOST``; ``(ui-tars format)`` after a model that answers in another format
    than the json one."""
    kind = str(model.get("kind") or "scripted")
    answers = reply_format(kind, str(model.get("name") or ""), str(model.get("format") or "auto"))
    suffix = f" ({answers} format)" if answers != "json" else ""
    if kind == "scripted":
        script = model.get("script")
        return (f"scripted model {PurePath(str(script)).name}" if script else "scripted model") + suffix
    name = str(model.get("azure_deployment") or model.get("name") or "?") if kind == "azure" \
        else str(model.get("name") or "?")
    url = model.get("azure_endpoint") if kind == "azure" else model.get("base_url")
    host = host_of(url) if isinstance(url, str) else None
    return (f"{kind} {name} at {host}" if host else f"{kind} {name}") + suffix
