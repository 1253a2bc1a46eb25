"""Command line: ``python -m ufo_mobile run TASK.yaml``.

Exit codes: 0 the task finished, 1 it failed, 2 usage or configuration error (one line, no
traceback), 128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO, cast

from ufo_mobile import shipped
from ufo_mobile.cli.console import Console, PipeSafeStream
from ufo_mobile.cli.operator import TerminalOperator
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.errors import ConfigError, RunWriteError, UIParseError
from ufo_mobile.safe_text import json_printable, printable, printable_lines
from ufo_mobile.settings import Settings, load_settings, settings_of_run
from ufo_mobile.shipped import task_path

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class _Parser(argparse.ArgumentParser):
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
    if not _RUN_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a usable run id (letters, digits, '.', '_' and '-'; at most 100)")
    return text


PROVIDERS = ("openai", "azure", "openai_compatible", "scripted")  # model.kind, for --provider
MODES = ("direct", "reasoning", "codeact")  # mode, for --mode


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m ufo_mobile", description="Run LLM agents that operate Android phones.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    run = sub.add_parser("run", help="run a YAML task file",
                         description="Run a task file; exit 0 when it finishes, 1 when it fails.")
    run.add_argument("task", type=Path, nargs="?",
                     help="task file (YAML), or the name of a shipped task: demo (the simulated phone, offline), "
                          "openai, azure, local (see: config --print)")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR",
                     help="continue a run that was interrupted (Ctrl-C, a crash, a lost device, SIGKILL) from its "
                          "last completed step, in the same run directory, with its settings, plan and memory")
    run.add_argument("--device", metavar="SERIAL",
                     help="'sim' for the built-in simulated phone, or an adb serial / host:port of a real phone")
    run.add_argument("--driver", choices=("adb", "u2"),
                     help="with a real phone: plain adb (default) or uiautomator2 (falls back to adb)")
    run.add_argument("--provider", choices=PROVIDERS,
                     help="the model's kind (model.kind): openai ($OPENAI_API_KEY), azure ($AZURE_OPENAI_API_KEY, "
                          "$AZURE_OPENAI_ENDPOINT, $OPENAI_API_VERSION), openai_compatible (any server with "
                          "the chat-completions API, given by --base-url) or scripted (offline replies)")
    run.add_argument("--model", metavar="NAME", help="the model's name (model.name; for azure the deployment)")
    run.add_argument("--base-url", metavar="URL",
                     help="the server's API URL (model.base_url), e.g. http://localhost:11434/v1; "
                          "for azure the resource endpoint (model.azure_endpoint)")
    run.add_argument("--mode", choices=MODES,
                     help="how the agent works (mode): direct (one JSON action per step, the default), reasoning "
                          "(a manager plans, an executor acts per subgoal) or codeact (the model writes Python "
                          "calling the actions)")
    run.add_argument("--max-steps", type=int, metavar="N", help="override limits.max_steps")
    run.add_argument("--log-dir", type=Path, metavar="DIR", help="where run directories go (default logs/)")
    run.add_argument("--config", type=Path, metavar="FILE",
                     help="defaults file (default: default.yaml next to or above the task file)")
    run.add_argument("--run-id", type=run_id, metavar="ID",
                     help="name the run directory (default: time, task name and a random suffix); "
                          "when taken, ID-2, ID-3, ... is used")
    run.add_argument("--quiet", action="store_true", help="print only the final summary")
    report = sub.add_parser("report", help="summarise a run directory (also one that was cut off) and write "
                                           "its HTML report",
                            description="Print a run's outcome and steps from its directory, and write "
                                        "RUN_DIR/report.html (one self-contained page). A run whose "
                                        "process was killed is marked as cut off.")
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="e.g. logs/20261121-143841-turn-on-wifi-0d4b")
    devices = sub.add_parser("devices", help="list connected phones (serial, model, Android version, screen)")
    devices.add_argument("--adb-port", type=port_number, metavar="PORT", help="adb server port (default 5037)")
    sim = sub.add_parser("sim", help="serve the simulated phone over the ADB protocol (adb connect 127.0.0.1:PORT)")
    sim.add_argument("--port", type=port_number, default=15555,
                     help="TCP port on 127.0.0.1 (default 15555; 0 picks a free one)")
    sim.add_argument("--width", type=positive, default=1080)
    sim.add_argument("--height", type=positive, default=2400)
    from ufo_mobile.sim.android.profile import SIM_COMMAND_PROFILE, profile_names  # a light module

    sim.add_argument("--profile", choices=profile_names(), default=SIM_COMMAND_PROFILE, metavar="NAME",
                     help=f"how much the phone behaves like a real one: {', '.join(profile_names())} "
                          f"(default {SIM_COMMAND_PROFILE}; kind answers every command kindly)")
    ui = sub.add_parser("ui", help="show what the model sees on a screen (indexed controls, set-of-mark)",
                        description="Print the indexed screen text the model would see for a uiautomator "
                                    "dump, or its controls as JSON, and draw the annotated screenshot.")
    ui.add_argument("dump", help="uiautomator XML dump, or - for standard input")
    ui.add_argument("--screenshot", type=Path, metavar="PNG", help="the screenshot of the same screen")
    ui.add_argument("--annotate", type=Path, metavar="OUT.png",
                    help="write the annotated screenshot here (drawn from the dump when no --screenshot)")
    ui.add_argument("--json", action="store_true", help="print the controls as JSON instead of the text")
    config = sub.add_parser("config", help="print the shipped defaults file, or copy it with the shipped tasks "
                                           "and suite to a folder to edit",
                            description="Without options, print the shipped default.yaml (every key documented). "
                                        "--copy DIR writes default.yaml, tasks/ and suite/ into DIR (nothing is "
                                        "overwritten); --path prints the folder they ship in.")
    config_action = config.add_mutually_exclusive_group()
    config_action.add_argument("--print", action="store_true", help="print default.yaml (the default)")
    config_action.add_argument("--copy", type=Path, metavar="DIR", help="copy the shipped config into DIR")
    config_action.add_argument("--path", action="store_true", help="print where the shipped config is")
    from ufo_mobile.cli.replay_cmd import add_replay_parser  # the command lives in its own module

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


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {value}")
    return value


def device_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``--device`` and ``--driver`` as ``device`` settings. ``--device SERIAL`` alone keeps the
    driver the settings name (``kind: u2`` stays u2); ``on_a_real_phone`` turns ``sim`` into adb."""
    if args.device == "sim":
        if args.driver:
            raise ConfigError("--driver is for real phones; the simulated phone needs none", key="--driver")
        return {"kind": "sim"}
    out: dict[str, Any] = {}
    if args.device is not None:
        out["serial"] = args.device
    if args.driver:
        out["kind"] = args.driver
    return out


def on_a_real_phone(settings: Settings, args: argparse.Namespace) -> Settings:
    """``settings`` for the phone ``--device SERIAL`` names: a task made for the simulated phone
    uses plain adb there (another driver only with ``--driver``)."""
    if args.device in (None, "sim") or args.driver or settings.device.kind != "sim":
        return settings
    return settings.model_copy(update={"device": settings.device.model_copy(update={"kind": "adb"})})


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    device = device_overrides(args)
    if device:
        out["device"] = device
    model = _model_overrides(args)
    if model:
        out["model"] = model
    if args.max_steps is not None:
        if args.max_steps <= 0:
            raise ConfigError("must be a positive number of steps", key="--max-steps")
        out["limits"] = {"max_steps": args.max_steps}
    if args.log_dir is not None:
        out["logs"] = {"dir": str(args.log_dir)}
    if args.mode is not None:
        out["mode"] = args.mode
    return out


def _model_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
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


def _exit_code(result: RunResult) -> int:
    if result.signal is not None:
        return 128 + result.signal
    return EXIT_OK if result.ok else EXIT_FAIL


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    settings = run_settings(args)
    # a person at a terminal can take over the phone and approve actions; without one, nobody can
    operator = TerminalOperator(sys.stdin, sys.stderr) if sys.stdin is not None and sys.stdin.isatty() else None
    session = Session(settings, handle_signals=True, run_id=args.run_id, operator=operator, resume=args.resume)
    return run_at_terminal(session, settings.task.text, out, quiet=args.quiet)


def run_settings(args: argparse.Namespace) -> Settings:
    """The settings ``run`` runs with: the task file's (or, with ``--resume``, the run's), with the
    command line's options over them."""
    if args.resume is not None:
        if args.task is not None:
            raise ConfigError("give a task file or --resume RUN_DIR, not both", key="--resume")
        from ufo_mobile.core.trace import runs

        settings: Settings = settings_of_run(runs.read_run(args.resume), overrides=_overrides(args),
                                             source=str(args.resume / "run.json"))
    elif args.task is None:
        raise ConfigError("give a task file (or --resume RUN_DIR)", key="task")
    else:
        settings = load_settings(task_path(args.task), config_path=args.config, overrides=_overrides(args))
    return on_a_real_phone(settings, args)


def run_at_terminal(session: Session, title: str, out: TextIO, *, quiet: bool) -> int:
    """Run ``session``, printing its header (``title``), a line per step unless ``quiet``, the summary
    and where the report is; the exit code of ``run``."""
    console = Console(out, session.redactor)

    def started(s: Session) -> None:
        console.print(console.header(s.run_id, title))
        if s.resume_note:  # a resume that goes on with an older state than its last step's
            console.print(f"note: {console.safe(s.resume_note)}")

    session.on_start = started
    if not quiet:
        session.on_step = lambda step: console.print(console.step(step))
    try:
        result = asyncio.run(session.run())
    except RunWriteError as exc:
        _err(f"error: {console.safe(str(exc))}; the run could not record its end (the next run in "
             "this log directory marks it as cut off)")
        return EXIT_FAIL
    console.print(console.summary(result.to_json()))
    if (result.run_dir / "report.html").is_file():
        console.print(f"report: {console.safe(str(result.run_dir / 'report.html'))}")
    return _exit_code(result)


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.core.trace import runs

    run_dir: Path = args.run_dir
    data = runs.settle(run_dir)
    console = Console(out)
    console.print(console.header(str(data.get("run_id", run_dir.name)), str(data.get("task", ""))))
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

    from ufo_mobile.core.device.discovery import AdbUnavailableError, format_rows, list_devices

    client = adbutils.AdbClient(port=args.adb_port, socket_timeout=10)
    try:
        rows = list_devices(client)
    except AdbUnavailableError as exc:
        _err(f"error: {printable(str(exc))}")
        return EXIT_FAIL
    print(format_rows(rows), file=out)
    return EXIT_OK


def cmd_sim(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.sim.phone.simphone import SimPhone
    from ufo_mobile.sim.servers.adb.daemon import serve

    def ready(port: int) -> None:
        print(f"simulated phone listening on 127.0.0.1:{port}; connect with: adb connect 127.0.0.1:{port}",
              file=out, flush=True)

    try:
        asyncio.run(serve(SimPhone(width=args.width, height=args.height), "127.0.0.1", args.port, ready=ready,
                          profile=args.profile))
    except OSError as exc:
        raise ConfigError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", key="--port") from exc
    except KeyboardInterrupt:  # Ctrl-C is how a user stops the simulated phone
        print("simulated phone stopped", file=out)
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
        _err(f"annotated screenshot: {printable(str(args.annotate))}")
        if png is None:  # the wireframe draws the labels: say which scripts no font here draws
            from ufo_mobile.core.ui.fonts import missing_note

            note = missing_note("".join(c.label or "" for c in state.elements))
            if note is not None:
                _err(printable(note))
    return EXIT_OK


def cmd_config(args: argparse.Namespace, out: TextIO) -> int:
    if args.path:
        print(shipped.CONFIG_DIR, file=out)
    elif args.copy is not None:
        written = shipped.copy_config(args.copy)
        print(f"copied {len(written)} files to {printable(str(args.copy))}: default.yaml, tasks/, suite/; "
              f"run one with: python -m ufo_mobile run {printable(str(args.copy / 'tasks' / 'demo.yaml'))}",
              file=out)
    else:
        out.write(shipped.DEFAULT_CONFIG.read_text(encoding="utf-8"))
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
    stream = cast(TextIO, PipeSafeStream(out or sys.stdout))
    try:
        return COMMANDS[args.command](args, stream)
    except ConfigError as exc:
        _err(f"error: {printable(str(exc))}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_INTERRUPTED


def _err(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (BrokenPipeError, ValueError):
        pass
