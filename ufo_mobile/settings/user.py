"""The user's own settings: the user config file (where it is, and the starter ``config --init``
writes) and the few environment variables that name the model and the phone. ``loading.py`` lays
them over the shipped defaults and under a task's own files."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ufo_mobile.errors import ConfigError

CONFIG_ENV = "UFO_MOBILE_CONFIG"  # the user config file's path, over the platform's usual place
FILE_NAME = "config.yaml"
# the shipped defaults file, the lowest layer of every load (ufo_mobile/shipped.py names the same file;
# the settings sit under it, so they find it themselves)
SHIPPED_DEFAULTS = Path(__file__).resolve().parents[1] / "config" / "default.yaml"

# the environment variables read as settings, and the key each one sets
ENV_KEYS: dict[str, str] = {
    "UFO_MOBILE_PROVIDER": "model.kind",
    "UFO_MOBILE_MODEL": "model.name",
    "UFO_MOBILE_BASE_URL": "model.base_url (azure: model.azure_endpoint)",
    "UFO_MOBILE_DEVICE": "device: sim, or an adb serial / host:port",
}
_PROVIDERS = ("openai", "azure", "openai_compatible", "scripted")


def user_config_path(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """Where the user config file is: ``$UFO_MOBILE_CONFIG``, else ``config.yaml`` in the platform's
    user config folder (``$XDG_CONFIG_HOME/ufo_mobile`` or ``~/.config/ufo_mobile``; macOS
    ``~/Library/Application Support/ufo_mobile``; Windows ``%APPDATA%\\ufo_mobile``). The file need
    not exist."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV]).expanduser()
    if platform == "win32":
        folder = Path(env["APPDATA"]) if env.get("APPDATA") else Path.home() / "AppData" / "Roaming"
    elif platform == "darwin":
        folder = Path.home() / "Library" / "Application Support"
    else:
        folder = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return folder / "ufo_mobile" / FILE_NAME


def env_settings(env: Mapping[str, str], below: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The settings each ``UFO_MOBILE_*`` variable of ``env`` sets, as ``(variable, settings)``
    pairs (an empty variable sets nothing). ``below`` is what the layers under them merged to: a
    serial for settings left on the simulator drives the phone over plain adb, and a base URL for
    azure is its endpoint.

    Raises:
        ConfigError: a provider that is not one, naming the variable.
    """
    def value(name: str) -> str | None:
        text = env.get(name, "").strip()
        return text or None

    out: list[tuple[str, dict[str, Any]]] = []
    provider = value("UFO_MOBILE_PROVIDER")
    if provider is not None:
        if provider not in _PROVIDERS:
            raise ConfigError(f"{provider!r} is not a provider ({', '.join(_PROVIDERS)})", key="UFO_MOBILE_PROVIDER")
        out.append(("UFO_MOBILE_PROVIDER", {"model": {"kind": provider}}))
    name = value("UFO_MOBILE_MODEL")
    if name is not None:
        out.append(("UFO_MOBILE_MODEL", {"model": {"name": name}}))
    url = value("UFO_MOBILE_BASE_URL")
    if url is not None:
        kind = provider or (below.get("model") or {}).get("kind")
        out.append(("UFO_MOBILE_BASE_URL", {"model": {"azure_endpoint" if kind == "azure" else "base_url": url}}))
    device = value("UFO_MOBILE_DEVICE")
    if device == "sim":
        out.append(("UFO_MOBILE_DEVICE", {"device": {"kind": "sim"}}))
    elif device is not None:
        kind = (below.get("device") or {}).get("kind", "sim")
        out.append(("UFO_MOBILE_DEVICE", {"device": {"serial": device, **({"kind": "adb"} if kind == "sim" else {})}}))
    return out


def goal_name(goal: str) -> str:
    """A task name for a goal typed on the command line: its words, lower case, joined by '-'."""
    return re.sub(r"[^a-z0-9]+", "-", goal.lower()).strip("-")[:40] or "goal"


STARTER = """\
# ufo_mobile's user config: read by run, eval, batch, serve and mcp, under every task's own settings
# (a task file, and the default.yaml next to it, win; so do command-line options). The keys are
# default.yaml's (python -m ufo_mobile config --print); check what is in force with:
#   python -m ufo_mobile config
# Environment variables win over this file: UFO_MOBILE_PROVIDER, UFO_MOBILE_MODEL,
# UFO_MOBILE_BASE_URL, UFO_MOBILE_DEVICE.

model:
  kind: openai                 # openai ($OPENAI_API_KEY), azure, openai_compatible (with base_url)
  name: gpt-4.1-mini
  # base_url: http://localhost:11434/v1    # openai_compatible: your server (Ollama, vLLM, LM Studio)
  # api_key_env: MY_KEY_VARIABLE           # the variable holding the key; never the key itself

# device:
#   kind: adb                  # a real phone over adb (u2: uiautomator2); sim: the simulated phone
#   serial: emulator-5554      # null: the only phone the adb server sees
#   choose: phone              # with no device named: use a lone phone without asking (ask, sim)

# mode: direct                 # direct, reasoning or codeact
# limits:
#   max_steps: 20
"""


def write_starter(path: Path) -> None:
    """Write the commented starter user config at ``path`` (its folder made if needed).

    Raises:
        ConfigError: ``path`` already exists (it is never overwritten) or cannot be written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as out:
            out.write(STARTER)
    except FileExistsError:
        raise ConfigError("already exists (nothing was written; edit it, or move it away first)",
                          path=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot write: {exc.strerror}", path=str(path)) from exc
