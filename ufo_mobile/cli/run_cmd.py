"""``python -m ufo_mobile run TASK.yaml`` or ``run "Turn on Wi-Fi"``: run a task file or a goal (or
continue an interrupted run with ``--resume RUN_DIR``) at the terminal; exit 0 when it finishes, 1
when it fails, 128+N when signal N stopped it. What TASK is: ``task_or_goal``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ufo_mobile.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    FORMAT_HELP,
    FORMATS,
    MODES,
    PROVIDERS,
    device_overrides,
    err,
    model_overrides,
    on_a_real_phone,
    run_id,
)
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.safe_text import printable

if TYPE_CHECKING:  # the runtime is imported when a command runs: the parser (and --help) needs none of it
    from ufo_mobile.core.session import RunResult, Session
    from ufo_mobile.settings import Loaded, Settings


def add_run_parser(sub: Any) -> None:
    """The ``run`` command's arguments (``sub``: the command line's subparsers)."""
    run = sub.add_parser("run", help="run a goal (\"Turn on Wi-Fi\") or a YAML task file (or go on with an "
                                     "interrupted run: --resume RUN_DIR)",
                         description="Run a goal with the model and phone of your user config (see: config), a "
                                     "task file, or with --resume RUN_DIR go on with a run that was interrupted; "
                                     "exit 0 when it finishes, 1 when it fails.")
    run.add_argument("task", nargs="?", metavar="TASK",
                     help="a goal in words (\"Turn on Wi-Fi\"; - reads it from standard input), a task file "
                          "(YAML), or the name of a shipped task: demo (the simulated phone, offline), openai, "
                          "azure, local (see: config --print)")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR",
                     help="continue a run that was interrupted (Ctrl-C, a crash, a lost device, SIGKILL) from its "
                          "last completed step, in the same run directory, with its settings, plan and memory")
    run.add_argument("--device", metavar="SERIAL",
                     help="'sim' for the built-in simulated phone, an adb serial / host:port of a real phone, or "
                          "wda:URL for an iPhone's WebDriverAgent (wda:http://127.0.0.1:8100)")
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
    run.add_argument("--format", choices=FORMATS, help=FORMAT_HELP)
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


def run_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``run``'s options as settings laid over the task file's."""
    out: dict[str, Any] = {}
    device = device_overrides(args)
    if device:
        out["device"] = device
    model = model_overrides(args)
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


def exit_code(result: RunResult) -> int:
    if result.signal is not None:
        return 128 + result.signal
    return EXIT_OK if result.ok else EXIT_FAIL


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    from ufo_mobile.cli.goal import ask_yes_no
    from ufo_mobile.cli.operator import TerminalOperator
    from ufo_mobile.core.session import Session

    at_terminal = sys.stdin is not None and sys.stdin.isatty()
    settings = run_settings(args, ask=ask_yes_no if at_terminal else None)
    # a person at a terminal can take over the phone and approve actions; without one, nobody can
    operator = TerminalOperator(sys.stdin, sys.stderr) if at_terminal else None
    session = Session(settings, handle_signals=True, run_id=args.run_id, operator=operator,
                            resume=args.resume)
    return run_at_terminal(session, settings.task.text, out, quiet=args.quiet)


def run_settings(args: argparse.Namespace, *, ask: Callable[[str], bool] | None = None) -> Settings:
    """The settings ``run`` runs with: the goal's or the task file's (or, with ``--resume``, the
    run's), with the command line's options over them, on the phone ``choose_device`` settles
    (``ask``: a yes/no question to the person at the terminal, None when there is nobody)."""
    from ufo_mobile.core.device.choice import choose_device
    from ufo_mobile.settings import settings_of_run, user_config_path

    if args.resume is not None:
        if args.task is not None:
            raise ConfigError("give a task file or --resume RUN_DIR, not both", key="--resume")
        from ufo_mobile.core.trace import runs

        settings: Settings = settings_of_run(runs.read_run(args.resume), overrides=run_overrides(args),
                                             source=str(args.resume / "run.json"))
        return on_a_real_phone(settings, args)
    if args.task is None:
        raise ConfigError("give a goal (run \"Turn on Wi-Fi\"), a task file, or --resume RUN_DIR", key="task")
    loaded = load_run(args)
    choice = choose_device(on_a_real_phone(loaded.settings, args), named=loaded.device_named, ask=ask,
                           where=str(user_config_path()))
    if choice.note:
        err(f"note: {printable(choice.note)}")
    return choice.settings


def load_run(args: argparse.Namespace) -> Loaded:
    """The goal's or the task file's settings (``args.task``, see ``task_or_goal``) with the options.

    Raises:
        ConfigError: no such task file, or settings that do not load; a goal with no model named
            anywhere says how to name one.
    """
    from ufo_mobile.cli.goal import task_or_goal
    from ufo_mobile.settings import load_goal, load_task

    task_file, goal = task_or_goal(args.task)
    if task_file is not None:
        return load_task(task_file, config_path=args.config, overrides=run_overrides(args))
    try:
        return load_goal(goal or "", config_path=args.config, overrides=run_overrides(args))
    except ConfigError as exc:
        if exc.message.startswith("the scripted model needs"):
            raise ConfigError("a goal needs a model: name one in your user config (python -m ufo_mobile config "
                              "--init writes a starter), or give --provider and --model", key="model") from None
        raise


def run_at_terminal(session: Session, title: str, out: TextIO, *, quiet: bool, model: str | None = None) -> int:
    """Run ``session``, printing its header (``title``, then the mode, phone and model of the settings
    in force; ``model`` names the model instead), what each step in flight does and a line per step
    unless ``quiet``, then the summary and where the report is; the exit code of ``run``."""
    import asyncio

    from ufo_mobile.cli.console import Console
    from ufo_mobile.cli.live import follow, show_progress, view_for
    from ufo_mobile.report.setup import describe_setup

    console = Console(out, session.redactor)
    # what a step in flight is doing, live (cli/live.py)
    view = view_for(console, quiet=quiet, show_agent=session.settings.mode == "reasoning")

    def started(s: Session) -> None:
        if not quiet:
            setup = describe_setup(s.settings.model_dump(mode="json"), model=model)
            console.print(console.header(s.run_id, title, setup))
        if s.resume_note:  # a resume that goes on with an older state than its last step's
            console.print(f"note: {console.safe(s.resume_note)}")

    session.on_start = started
    if view is not None:
        show_progress(session, view, console)
    try:
        result = asyncio.run(follow(view, session.run()) if view is not None else session.run())
    except RunWriteError as exc:
        err(f"error: {console.safe(str(exc))}; the run could not record its end (the next run in "
            "this log directory marks it as cut off)")
        return EXIT_FAIL
    finally:
        if view is not None:
            view.close()  # the terminal is left clean however the run ended
    console.print(console.summary(result.to_json()))
    if (result.run_dir / "report.html").is_file():
        console.print(f"report: {console.safe(str(result.run_dir / 'report.html'))}")
    return exit_code(result)
