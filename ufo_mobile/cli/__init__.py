"""Command line: ``python -m ufo_mobile run TASK.yaml`` (or ``run "Turn on Wi-Fi"``).

Exit codes: 0 the task finished, 1 it failed, 2 usage or configuration error (one line, no
traceback), 128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).

Each command that runs tasks lives in a module of its own (``run_cmd``, ``replay_cmd``, ``eval_cmd``,
``batch_cmd``, ``serve_cmd``, ``mcp_cmd``, ``config_cmd``); what they share is in ``common``. The small ones
(``report``, ``devices``, ``sim``, ``ui``) are here; ``config`` is in ``config_cmd``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

import ufo_mobile
from ufo_mobile.cli.common import (
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    MODES,
    PROVIDERS,
    OneLineParser,
    device_overrides,
    err,
    fraction,
    on_a_real_phone,
    port_number,
    positive,
    run_id,
)
from ufo_mobile.cli.config_cmd import add_config_parser, cmd_config
from ufo_mobile.cli.run_cmd import add_run_parser, cmd_run, run_at_terminal, run_overrides, run_settings
from ufo_mobile.errors import ConfigError, RunWriteError, UIParseError
from ufo_mobile.safe_text import json_printable, printable, printable_lines

if TYPE_CHECKING:
    from ufo_mobile.cli.console import Console

__all__ = ["EXIT_FAIL", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "MODES", "PROVIDERS", "build_parser",
           "device_overrides", "fraction", "main", "on_a_real_phone", "port_number", "positive", "run_at_terminal",
           "run_id", "run_overrides", "run_settings"]


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m ufo_mobile", description="Run LLM agents that operate Android phones.",
                           epilog="Each command takes --help: python -m ufo_mobile COMMAND --help.")
    # the version is the package's (ufo_mobile.__version__, which setup.cfg reads too)
    parser.add_argument("--version", action="version", version=f"ufo_mobile {ufo_mobile.__version__}",
                        help="print the version (ufo_mobile X.Y.Z) and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser)
    add_run_parser(sub)
    add_report_parser(sub)
    add_devices_parser(sub)
    add_sim_parser(sub)
    add_ui_parser(sub)
    add_config_parser(sub)
    # the commands that live in their own modules
    from ufo_mobile.cli.replay_cmd import add_replay_parser

    add_replay_parser(sub)
    from ufo_mobile.cli.batch_cmd import add_batch_parser

    add_batch_parser(sub)
    from ufo_mobile.cli.eval_cmd import add_eval_parser

    add_eval_parser(sub)
    from ufo_mobile.cli.serve_cmd import add_serve_parser

    add_serve_parser(sub)
    from ufo_mobile.cli.mcp_cmd import add_mcp_parser

    add_mcp_parser(sub)
    return parser


def add_report_parser(sub: Any) -> None:
    """The ``report`` command's arguments."""
    report = sub.add_parser("report", help="summarise a run directory (also one that was cut off) and write "
                                           "its HTML report",
                            description="Print a run's outcome and steps from its directory, and write "
                                        "RUN_DIR/report.html (one self-contained page). A run whose "
                                        "process was killed is marked as cut off.")
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="e.g. logs/20261121-143841-turn-on-wifi-0d4b")


def add_devices_parser(sub: Any) -> None:
    """The ``devices`` command's arguments."""
    devices = sub.add_parser("devices", help="list connected phones (serial, model, Android version, screen)",
                             description="List every phone the adb server sees: serial, state, model, Android "
                                         "version and screen size, and what to do about a phone that is "
                                         "unauthorized or offline. When no adb server answers on the port, "
                                         "one is started there, on 127.0.0.1 only: the adb on PATH, else the "
                                         "one that ships with adbutils (no install needed).")
    devices.add_argument("--adb-port", type=port_number, metavar="PORT",
                         help="the adb server's port on this machine (default $ANDROID_ADB_SERVER_PORT, else "
                              "5037); a server is started there when none answers")
    devices.add_argument("--wda", action="append", default=[], metavar="URL",
                         help="list the iPhone whose WebDriverAgent answers at URL (http://127.0.0.1:8100) instead "
                              "of the adb server's phones; may be given more than once")


def add_sim_parser(sub: Any) -> None:
    """The ``sim`` command's arguments."""
    sim = sub.add_parser("sim", help="serve the simulated phone over the ADB protocol (adb connect 127.0.0.1:PORT), "
                                     "or as an iPhone's WebDriverAgent (--wda)",
                         description="Serve the built-in simulated phone as an adb device on 127.0.0.1 until "
                                     "Ctrl-C: after 'adb connect 127.0.0.1:PORT', adb, adbutils, uiautomator2 "
                                     "and run --device 127.0.0.1:PORT drive it like a real phone. With --wda it "
                                     "is an iPhone instead: its WebDriverAgent answers on "
                                     "http://127.0.0.1:PORT for WDA clients (wdapy, facebook-wda, Appium's).")
    sim.add_argument("--wda", action="store_true",
                     help="serve the phone as an iPhone's WebDriverAgent (HTTP, coordinates in points at 3 "
                          "pixels per point) instead of as an adb device")
    sim.add_argument("--port", type=port_number, default=None,
                     help="TCP port on 127.0.0.1 (default 15555, 8100 with --wda; 0 picks a free one)")
    sim.add_argument("--width", type=positive, default=None, metavar="PX",
                     help="the screen's width in pixels (default 1080; 1179 with --wda, an iPhone 15)")
    sim.add_argument("--height", type=positive, default=None, metavar="PX",
                     help="the screen's height in pixels (default 2400; 2556 with --wda, an iPhone 15)")
    from ufo_mobile.sim.android.profile import SIM_COMMAND_PROFILE, profile_names  # a light module

    sim.add_argument("--profile", choices=profile_names(), default=SIM_COMMAND_PROFILE, metavar="NAME",
                     help=f"how much the phone behaves like a real one: {', '.join(profile_names())} "
                          f"(default {SIM_COMMAND_PROFILE}; kind answers every command kindly; not used "
                          f"with --wda)")


def add_ui_parser(sub: Any) -> None:
    """The ``ui`` command's arguments."""
    ui = sub.add_parser("ui", help="show what the model sees on a screen (indexed controls, set-of-mark)",
                        description="Print the indexed screen text the model would see for a uiautomator "
                                    "dump, or its controls as JSON, and draw the annotated screenshot.")
    ui.add_argument("dump", help="uiautomator XML dump, or - for standard input")
    ui.add_argument("--screenshot", type=Path, metavar="PNG", help="the screenshot of the same screen")
    ui.add_argument("--annotate", type=Path, metavar="OUT.png",
                    help="write the annotated screenshot here (drawn from the dump when no --screenshot)")
    ui.add_argument("--json", action="store_true", help="print the controls as JSON instead of the text")


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.cli.console import Console
    from ufo_mobile.core.trace import runs
    from ufo_mobile.report.setup import setup_of_run

    run_dir: Path = args.run_dir
    data = runs.settle(run_dir)
    console = Console(out)
    console.print(console.header(str(data.get("run_id", run_dir.name)), str(data.get("task", "")), setup_of_run(data)))
    steps = runs.read_steps(run_dir)
    for line in steps:
        console.print(console.recorded_step(line))
    if data.get("status") == runs.RUNNING:
        console.print(f"RUNNING (process {data.get('pid', '?')}): {len(steps)} steps so far")
        code = EXIT_OK
    else:
        console.print(console.summary({**data, "run_dir": str(run_dir)}))
        code = EXIT_OK if data.get("status") == "FINISH" else EXIT_FAIL
    console.print(_html_report(run_dir, console))
    return code


def _html_report(run_dir: Path, console: Console) -> str:
    """Write the run's ``report.html``; the line that says where it is (or why it is not)."""
    from ufo_mobile.report import write_report

    notes: list[str] = []
    try:
        path = write_report(run_dir, notes=notes)
    except RunWriteError as exc:
        return f"report: not written: {console.safe(str(exc))}"
    return "\n".join([*(console.safe(note) for note in notes), f"report: {console.safe(str(path))}"])


def _read_input(path: str, what: str, *, binary: bool = False) -> Any:
    try:
        if path == "-":
            return sys.stdin.buffer.read() if binary else sys.stdin.read()
        return Path(path).read_bytes() if binary else Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror}", path=path) from exc


def cmd_devices(args: argparse.Namespace, out: TextIO) -> int:
    import adbutils

    from ufo_mobile.core.device.discovery import format_rows, list_devices, wda_row
    from ufo_mobile.core.device.local_adb import AdbUnavailableError, ensure_server

    if args.wda:  # iPhones cannot be discovered: each is asked at its WebDriverAgent's URL
        print(printable_lines(format_rows([wda_row(url) for url in args.wda])), file=out)
        return EXIT_OK
    client = adbutils.AdbClient(port=args.adb_port, socket_timeout=10)
    try:
        started = ensure_server(client.host, client.port)
        if started is not None:
            err(printable(f"started the adb server on {client.host}:{client.port} with {started} (it keeps "
                          f"running; 'adb -P {client.port} kill-server' stops it)"))
        rows = list_devices(client)
    except AdbUnavailableError as exc:
        err(f"error: {printable(str(exc))}")
        return EXIT_FAIL
    print(printable_lines(format_rows(rows)), file=out)
    return EXIT_OK


def cmd_sim(args: argparse.Namespace, out: TextIO) -> int:
    if args.wda:
        return _serve_wda(args, out)
    import asyncio

    from ufo_mobile.sim.phone.simphone import SimPhone
    from ufo_mobile.sim.servers.adb.daemon import serve

    port = 15555 if args.port is None else args.port

    def ready(port: int) -> None:
        print(f"simulated phone listening on 127.0.0.1:{port}; connect with: adb connect 127.0.0.1:{port}",
              file=out, flush=True)

    try:
        asyncio.run(serve(SimPhone(width=args.width or 1080, height=args.height or 2400), "127.0.0.1", port,
                          ready=ready, profile=args.profile))
    except OSError as exc:
        raise ConfigError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}", key="--port") from exc
    except KeyboardInterrupt:  # Ctrl-C is how a user stops the simulated phone
        print("simulated phone stopped", file=out)
    return EXIT_OK


def _serve_wda(args: argparse.Namespace, out: TextIO) -> int:
    """``sim --wda``: the simulated phone as an iPhone 15 (393x852 points at 3x) until Ctrl-C."""
    from ufo_mobile.sim.phone.simphone import SimPhone
    from ufo_mobile.sim.servers.wda import IPHONE_SIZE, EmulatedWda

    port = 8100 if args.port is None else args.port
    wda = EmulatedWda(SimPhone(width=args.width or IPHONE_SIZE[0], height=args.height or IPHONE_SIZE[1]), port=port)
    try:
        wda.start()
    except OSError as exc:
        raise ConfigError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}", key="--port") from exc
    try:
        print(f"simulated iPhone's WebDriverAgent listening on {wda.url}", file=out, flush=True)
        wda.wait()  # until Ctrl-C (or a client's GET /wda/shutdown)
    except KeyboardInterrupt:  # Ctrl-C is how a user stops the simulated phone
        print("simulated iPhone's WebDriverAgent stopped", file=out)
    finally:
        wda.stop()
    return EXIT_OK


def cmd_ui(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.core.ui.annotate import annotate, render_blank
    from ufo_mobile.core.ui.screenshot import png_size
    from ufo_mobile.core.ui.state import build_ui_state

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
        text = json.dumps({"phone_state": state.phone_state, "controls": controls}, ensure_ascii=False, indent=2)
        print(json_printable(text), file=out)
    else:
        print(printable_lines(state.formatted_text), file=out)
    if args.annotate is not None:
        size = (state.screen_width, state.screen_height)
        image = annotate(png, state.elements) if png is not None else render_blank(state.elements, size)
        if png is None:
            image = annotate(image, state.elements)
        try:
            args.annotate.write_bytes(image)
        except OSError as exc:
            raise ConfigError(f"cannot write: {exc.strerror}", path=str(args.annotate)) from exc
        err(f"annotated screenshot: {printable(str(args.annotate))}")
        if png is None:  # the wireframe draws the labels: say which scripts no font here draws
            from ufo_mobile.core.ui.fonts import missing_note

            note = missing_note("".join(c.label or "" for c in state.elements))
            if note is not None:
                err(printable(note))
    return EXIT_OK


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.cli.replay_cmd import run_replay

    return run_replay(args, out)


def cmd_batch(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.cli.batch_cmd import run_batch

    return run_batch(args, out)


def cmd_eval(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.cli.eval_cmd import run_eval

    return run_eval(args, out)


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.cli.serve_cmd import run_serve

    return run_serve(args, out)


def cmd_mcp(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.cli.mcp_cmd import run_mcp

    return run_mcp(args, out)


COMMANDS = {"run": cmd_run, "config": cmd_config, "report": cmd_report, "ui": cmd_ui, "devices": cmd_devices,
            "sim": cmd_sim, "replay": cmd_replay, "eval": cmd_eval, "batch": cmd_batch, "serve": cmd_serve,
            "mcp": cmd_mcp}


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    logging.getLogger("transitions").setLevel(logging.WARNING)
    args = build_parser().parse_args(argv)
    from ufo_mobile.cli.console import PipeSafeStream  # after the parser: --help needs none of the runtime

    stream = cast(TextIO, PipeSafeStream(out or sys.stdout))
    try:
        return COMMANDS[args.command](args, stream)
    except ConfigError as exc:
        err(f"error: {printable(str(exc))}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERRUPTED
