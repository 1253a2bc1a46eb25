"""What the commands share: exit codes, the parser whose errors fit on one line, the argument types,
the model and device options as settings, and the one line on stderr."""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from ufo_mobile.errors import ConfigError
from ufo_mobile.safe_text import printable

if TYPE_CHECKING:
    from ufo_mobile.settings import Settings

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
PROVIDERS = ("openai", "azure", "openai_compatible", "scripted")  # model.kind, for --provider
MODES = ("direct", "reasoning", "codeact")  # mode, for --mode
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its errors on one line (``error: argument --port: ...``) and exit 2."""

    def error(self, message: str) -> NoReturn:
        hint = f" (see: {self.prog} --help)"
        self.exit(EXIT_USAGE, f"error: {printable(message)}{hint}\n")


def port_number(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (0-65535)")
    return port


def fraction(text: str) -> float:
    """A share or threshold: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {value:g}")
    return value


def run_id(text: str) -> str:
    if not RUN_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a usable run id (letters, digits, '.', '_' and '-'; at most 100)")
    return text


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {value}")
    return value


FORMATS = ("auto", "json", "ui-tars", "qwen-vl", "qwen3-vl", "autoglm")
FORMAT_HELP = ("how the model is prompted and answers (model.format): json, ui-tars, qwen-vl, autoglm, or auto "
               "(by the model's name)")


def model_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``--provider``, ``--model``, ``--base-url`` and ``--format`` as ``model`` settings."""
    out: dict[str, Any] = {}
    if getattr(args, "format", None) is not None:
        out["format"] = args.format
    if args.provider is not None:
        out["kind"] = args.provider
    if args.model is not None:
        if not args.model.strip():
            raise ConfigError("the model name is empty", key="--model")
        out["name"] = args.model
    if args.base_url is not None:
        if not re.match(r"https?://[^/\s]", args.base_url):
            raise ConfigError(f"not an http(s) URL: {args.base_url!r}", key="--base-url")
        out["azure_endpoint" if args.provider == "azure" else "base_url"] = args.base_url
    return out


WDA_PREFIX = "wda:"  # --device wda:http://127.0.0.1:8100: an iPhone's WebDriverAgent


def device_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``--device`` and ``--driver`` as ``device`` settings. ``--device SERIAL`` alone keeps the
    driver the settings name (``kind: u2`` stays u2); ``on_a_real_phone`` turns ``sim`` into adb."""
    if args.device == "sim":
        if args.driver:
            raise ConfigError("--driver is for real phones; the simulated phone needs none", key="--driver")
        return {"kind": "sim"}
    if args.device is not None and args.device.startswith(WDA_PREFIX):
        url = args.device.removeprefix(WDA_PREFIX)
        if args.driver:
            raise ConfigError("--driver is for Android phones; an iPhone is driven through its WebDriverAgent",
                              key="--driver")
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"an iPhone is named by its WebDriverAgent's URL: wda:http://HOST:PORT, not {url!r}",
                              key="--device")
        return {"kind": "wda", "serial": url}
    out: dict[str, Any] = {}
    if args.device is not None:
        out["serial"] = args.device
    if args.driver:
        out["kind"] = args.driver
    return out


def on_a_real_phone(settings: Settings, args: argparse.Namespace) -> Settings:
    """``settings`` for the phone ``--device SERIAL`` names: a task made for the simulated phone
    uses plain adb there (another driver only with ``--driver``)."""
    if args.device in (None, "sim") or args.driver or settings.device.kind != "sim" or \
            str(args.device).startswith(WDA_PREFIX):
        return settings
    return settings.model_copy(update={"device": settings.device.model_copy(update={"kind": "adb"})})


def err(line: str) -> None:
    """Print one line on stderr (a closed or broken stderr is not an error of the command)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (BrokenPipeError, ValueError):
        pass
