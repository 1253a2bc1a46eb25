"""Command line: ``python -m ufo_mobile run TASK.yaml``.

Exit codes: 0 the task finished, 1 it failed, 2 usage or configuration error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ufo_mobile.errors import ConfigError, UIParseError
from ufo_mobile.processors.context import StepContext
from ufo_mobile.session import RunResult, Session
from ufo_mobile.settings import Settings, load_settings

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ufo_mobile",
                                     description="Run LLM agents that operate Android phones.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="run a YAML task file",
                         description="Run a task file; exit 0 when it finishes, 1 when it fails.")
    run.add_argument("task", type=Path, help="task file (YAML), e.g. config/tasks/demo.yaml")
    run.add_argument("--device", metavar="SERIAL",
                     help="'sim' for the built-in simulated phone, or an adb serial / host:port of a real phone")
    run.add_argument("--driver", choices=("adb", "u2"),
                     help="with a real phone: plain adb (default) or uiautomator2 (falls back to adb)")
    run.add_argument("--max-steps", type=int, metavar="N", help="override limits.max_steps")
    run.add_argument("--log-dir", type=Path, metavar="DIR", help="where run directories go (default logs/)")
    run.add_argument("--config", type=Path, metavar="FILE",
                     help="defaults file (default: default.yaml next to or above the task file)")
    run.add_argument("--quiet", action="store_true", help="print only the final summary")
    devices = sub.add_parser("devices", help="list connected phones (serial, model, Android version, screen)")
    devices.add_argument("--adb-port", type=int, metavar="PORT", help="adb server port (default 5037)")
    sim = sub.add_parser("sim", help="serve the simulated phone over the ADB protocol (adb connect 127.0.0.1:PORT)")
    sim.add_argument("--port", type=int, default=15555, help="TCP port on 127.0.0.1 (default 15555)")
    sim.add_argument("--width", type=int, default=1080)
    sim.add_argument("--height", type=int, default=2400)
    ui = sub.add_parser("ui", help="show what the model sees on a screen (indexed controls, set-of-mark)",
                        description="Print the indexed screen text the model would see for a uiautomator "
                                    "dump, or its controls as JSON, and draw the annotated screenshot.")
    ui.add_argument("dump", help="uiautomator XML dump, or - for standard input")
    ui.add_argument("--screenshot", type=Path, metavar="PNG", help="the screenshot of the same screen")
    ui.add_argument("--annotate", type=Path, metavar="OUT.png",
                    help="write the annotated screenshot here (drawn from the dump when no --screenshot)")
    ui.add_argument("--json", action="store_true", help="print the controls as JSON instead of the text")
    return parser


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if args.device == "sim":
        if args.driver:
            raise ConfigError("--driver is for real phones; the simulated phone needs none", key="--driver")
        out["device"] = {"kind": "sim"}
    elif args.device is not None:
        out["device"] = {"kind": args.driver or "adb", "serial": args.device}
    elif args.driver:
        out["device"] = {"kind": args.driver}
    if args.max_steps is not None:
        if args.max_steps <= 0:
            raise ConfigError("must be a positive number of steps", key="--max-steps")
        out["limits"] = {"max_steps": args.max_steps}
    if args.log_dir is not None:
        out["logs"] = {"dir": str(args.log_dir)}
    return out


def format_step(step: StepContext) -> str:
    """One progress line: step, status, action, outcome, phase timings."""
    action = step.action.render() if step.action else "-"
    if len(action) > 48:
        action = action[:47] + "…"
    if step.result is not None:
        outcome = ("ok   " if step.result.success else "FAIL ") + step.result.summary
    elif step.reason:
        outcome = step.reason
    else:
        outcome = ""
    if len(outcome) > 70:
        outcome = outcome[:69] + "…"
    short = {"data_collection": "obs", "llm_interaction": "llm", "action_execution": "act",
             "memory_update": "mem"}
    times = " ".join(f"{short.get(k, k)} {v * 1000:.0f}ms" for k, v in step.timings.items()
                     if k != "memory_update")
    return f"step {step.step:>3}  {step.status:<8}  {action:<48}  {outcome}  [{times}]"


def format_summary(result: RunResult) -> str:
    head = f"{result.status} after {result.steps} step{'s' if result.steps != 1 else ''}"
    head += f" in {result.duration_seconds:.1f} s"
    detail = result.answer or result.reason
    lines = [f"{head}: {detail}" if detail else head,
             f"run directory: {result.run_dir}",
             f"tokens: {result.prompt_tokens} prompt + {result.completion_tokens} completion, "
             f"cost ${result.cost_usd:.4f}"]
    return "\n".join(lines)


def _exit_code(result: RunResult) -> int:
    if result.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if result.ok else EXIT_FAIL


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    settings: Settings = load_settings(args.task, config_path=args.config, overrides=_overrides(args))

    session = Session(settings, handle_signals=True)

    def progress(step: StepContext) -> None:
        print(session.redactor.text(format_step(step)), file=out, flush=True)

    if not args.quiet:
        session.on_step = progress
    print(f"run {session.run_id}: {settings.task.text}", file=out, flush=True)
    result = asyncio.run(session.run())
    print(format_summary(result), file=out, flush=True)
    return _exit_code(result)


def _read_input(path: str, what: str, *, binary: bool = False) -> Any:
    try:
        if path == "-":
            return sys.stdin.buffer.read() if binary else sys.stdin.read()
        return Path(path).read_bytes() if binary else Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror}", path=path) from exc


def cmd_devices(args: argparse.Namespace, out: TextIO) -> int:
    import adbutils

    from ufo_mobile.device.discovery import AdbUnavailableError, format_rows, list_devices

    client = adbutils.AdbClient(port=args.adb_port, socket_timeout=10)
    try:
        rows = list_devices(client)
    except AdbUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAIL
    print(format_rows(rows), file=out)
    return EXIT_OK


def cmd_sim(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.sim.adbd import serve
    from ufo_mobile.sim.phone import SimPhone

    def ready(port: int) -> None:
        print(f"simulated phone listening on 127.0.0.1:{port}; connect with: adb connect 127.0.0.1:{port}",
              file=out, flush=True)

    try:
        asyncio.run(serve(SimPhone(width=args.width, height=args.height), "127.0.0.1", args.port, ready=ready))
    except OSError as exc:
        raise ConfigError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", key="--port") from exc
    except KeyboardInterrupt:  # Ctrl-C is how a user stops the simulated phone
        print("simulated phone stopped", file=out)
    return EXIT_OK


def cmd_ui(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.processors.data_collection import png_size
    from ufo_mobile.ui.annotate import annotate, render_blank
    from ufo_mobile.ui.state import build_ui_state

    xml = _read_input(args.dump, "the dump")
    png = _read_input(str(args.screenshot), "the screenshot", binary=True) if args.screenshot else None
    try:
        size = png_size(png) if png is not None else None
    except UIParseError as exc:
        raise ConfigError(str(exc), path=str(args.screenshot)) from exc
    try:
        state = build_ui_state(xml, observation_id="cli", screen_size=size)
    except UIParseError as exc:
        raise ConfigError(str(exc), path=args.dump) from exc
    if args.json:
        controls = [state.get_element_info(c.index) for c in state.elements]
        print(json.dumps({"phone_state": state.phone_state, "controls": controls}, ensure_ascii=False, indent=2),
              file=out)
    else:
        print(state.formatted_text, file=out)
    if args.annotate is not None:
        size = (state.screen_width, state.screen_height)
        image = annotate(png, state.elements) if png is not None else render_blank(state.elements, size)
        if png is None:
            image = annotate(image, state.elements)
        args.annotate.write_bytes(image)
        print(f"annotated screenshot: {args.annotate}", file=sys.stderr)
    return EXIT_OK


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    logging.getLogger("transitions").setLevel(logging.WARNING)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return cmd_run(args, out)
        if args.command == "ui":
            return cmd_ui(args, out)
        if args.command == "devices":
            return cmd_devices(args, out)
        if args.command == "sim":
            return cmd_sim(args, out)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE  # pragma: no cover
