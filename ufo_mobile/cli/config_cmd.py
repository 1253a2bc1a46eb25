"""``python -m ufo_mobile config``: the settings in force and where each came from (the shipped
defaults, the user config, an environment variable, a defaults file, the command line), the shipped
defaults file (``--print``), a copy of the shipped config to edit (``--copy``), where it ships
(``--path``), and a starter user config (``--init``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit, urlunsplit

from ufo_mobile import shipped
from ufo_mobile.cli.common import EXIT_OK, EXIT_USAGE, FORMATS, MODES, PROVIDERS, device_overrides, err, model_overrides
from ufo_mobile.errors import ConfigError
from ufo_mobile.safe_text import printable
from ufo_mobile.settings import ENV_KEYS, user_config_path, write_starter  # light: no pydantic

if TYPE_CHECKING:
    from ufo_mobile.settings import Merged

MASK = "********"


def add_config_parser(sub: Any) -> None:
    """The ``config`` command's arguments."""
    config = sub.add_parser("config", help="show the settings in force and where each came from; print, copy or "
                                           "start a config file",
                            description="Without options, show the settings in force (the shipped defaults, your "
                                        "user config, the UFO_MOBILE_* variables and the options given here, "
                                        "secrets masked) and where each one came from. --init writes a starter "
                                        "user config; --print prints the shipped default.yaml (every key "
                                        "documented); --copy DIR writes default.yaml, tasks/ and suite/ into DIR "
                                        "(nothing is overwritten); --path prints the folder they ship in.")
    action = config.add_mutually_exclusive_group()
    action.add_argument("--print", action="store_true", help="print the shipped default.yaml")
    action.add_argument("--copy", type=Path, metavar="DIR", help="copy the shipped config into DIR")
    action.add_argument("--path", action="store_true", help="print where the shipped config is")
    action.add_argument("--init", action="store_true",
                        help=f"write a commented starter user config at {printable(str(user_config_path()))} "
                             "($UFO_MOBILE_CONFIG moves it); an existing file is never overwritten")
    config.add_argument("--task", type=Path, metavar="TASK",
                        help="show the settings of this task file (or shipped task name) instead of a goal's")
    config.add_argument("--config", type=Path, metavar="FILE", help="a defaults file, as run --config takes")
    config.add_argument("--provider", choices=PROVIDERS, help="the model's kind, as run --provider takes")
    config.add_argument("--model", metavar="NAME", help="the model's name, as run --model takes")
    config.add_argument("--base-url", metavar="URL", help="the model server's URL, as run --base-url takes")
    config.add_argument("--device", metavar="SERIAL", help="'sim' or a phone's adb serial, as run --device takes")
    config.add_argument("--driver", choices=("adb", "u2"), help="with a real phone: adb or u2, as run --driver takes")
    config.add_argument("--format", choices=FORMATS, help="as run --format takes")
    config.add_argument("--mode", choices=MODES, help="direct, reasoning or codeact, as run --mode takes")


def cmd_config(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``config``: the action its option names, else ``show_settings``; the exit code."""
    if args.path:
        print(shipped.CONFIG_DIR, file=out)
    elif args.copy is not None:
        written = shipped.copy_config(args.copy)
        print(f"copied {len(written)} files to {printable(str(args.copy))}: default.yaml, tasks/, suite/; "
              f"run one with: python -m ufo_mobile run {printable(str(args.copy / 'tasks' / 'demo.yaml'))}",
              file=out)
    elif args.print:
        out.write(shipped.DEFAULT_CONFIG.read_text(encoding="utf-8"))
    elif args.init:
        path = user_config_path()
        write_starter(path)
        print(f"wrote {printable(str(path))}: name your model (and phone) there, then: "
              "python -m ufo_mobile run \"Turn on Wi-Fi\"", file=out)
    else:
        return show_settings(args, out)
    return EXIT_OK


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if device := device_overrides(args):
        out["device"] = device
    if model := model_overrides(args):
        out["model"] = model
    if args.mode is not None:
        out["mode"] = args.mode
    return out


def show_settings(args: argparse.Namespace, out: TextIO) -> int:
    """Print the settings in force, a ``key: value  # source`` line per key, secrets masked; when
    they do not load, why (on stderr, exit 2)."""
    from ufo_mobile.settings import task_layers, user_layers

    path = user_config_path()
    state = "" if path.is_file() else " (no such file; python -m ufo_mobile config --init writes a starter)"
    print(f"# user config: {printable(str(path))}{state}", file=out)
    print(f"# environment variables read: {', '.join(ENV_KEYS)}", file=out)
    if args.task is not None:
        merged: Merged = task_layers(shipped.task_path(args.task), config_path=args.config, overrides=_overrides(args))
    else:
        merged = user_layers(config_path=args.config, overrides=_overrides(args))
    print(f"# layers, lowest first: {printable(', '.join(layer.source for layer in merged.layers))}", file=out)
    _on_a_real_phone(merged, args)
    problem: ConfigError | None = None
    try:
        loaded = merged.validated()
        data, secrets = loaded.settings.model_dump(mode="json"), loaded.settings.secrets()
    except ConfigError as exc:
        data, secrets, problem = merged.data, [], exc
    if args.task is None:
        data = {k: v for k, v in data.items() if k != "task"}  # a goal's task is what run is given
    for key, value in _flat(data):
        shown = MASK if key.endswith("api_key") and value else _shown(value, secrets)
        print(f"{printable(key)}: {printable(shown)}  # {printable(merged.sources.get(key, 'built in'))}", file=out)
    if problem is None:
        return EXIT_OK
    if problem.message.startswith("the scripted model needs") and args.task is None:
        print("# no model yet: name one in your user config (python -m ufo_mobile config --init writes a "
              "starter), or give --provider and --model", file=out)
        return EXIT_OK
    err(f"error: {printable(str(problem))}")
    return EXIT_USAGE


def _on_a_real_phone(merged: Merged, args: argparse.Namespace) -> None:
    """As ``run --device SERIAL`` does (``cli/common.py``): settings left on the simulator use adb."""
    device = merged.data.get("device")
    if args.device in (None, "sim") or args.driver or not isinstance(device, dict) or device.get("kind") != "sim":
        return
    device["kind"] = "adb"
    merged.sources["device.kind"] = "command line"


def _flat(data: dict[str, Any], at: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out += _flat(value, f"{at}{key}.")
        else:
            out.append((f"{at}{key}", value))
    return out


def _shown(value: Any, secrets: list[str]) -> str:
    """``value`` as JSON, with a URL's user, password and query left out and every secret masked."""
    if isinstance(value, str) and "://" in value:
        try:
            parts = urlsplit(value)
            netloc = parts.netloc.rsplit("@", 1)[-1]
            value = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
        except ValueError:
            value = MASK
    text = json.dumps(value, ensure_ascii=False)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
