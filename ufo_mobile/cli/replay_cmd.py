"""``python -m ufo_mobile replay RUN_DIR``: a run's steps done again without a model, each on a screen
checked against the recorded one.

The replay is a run of its own (a new run directory, steps by the agent ``Replay``, no model
calls), with the recorded run's settings and the options given here. On a screen that differs it
stops (FAIL, exit 1, with the report) or, with ``--fallback agent``, the agent of the recorded
run's mode does the rest with the model. Exit codes are ``run``'s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from ufo_mobile.cli.common import device_overrides, fraction, on_a_real_phone
from ufo_mobile.cli.run_cmd import run_at_terminal


def add_replay_parser(sub: Any) -> None:
    """The ``replay`` command's arguments (``sub``: the command line's subparsers)."""
    replay = sub.add_parser(
        "replay", help="do a run's steps again without a model, checking every screen",
        description="Replay the actions of RUN_DIR on the phone without a model, checking before each one that "
                    "the app and the screen (its controls) match the recorded ones, and mapping each control "
                    "to its counterpart on the screen now. On a mismatch: stop with a report (exit 1), or, "
                    "with --fallback agent, let the agent of the run's mode do the rest with the model.")
    replay.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="e.g. logs/20261121-143841-turn-on-wifi-0d4b")
    replay.add_argument("--device", metavar="SERIAL",
                        help="'sim' for a fresh simulated phone, or an adb serial / host:port of a real phone "
                             "(default: the run's device)")
    replay.add_argument("--driver", choices=("adb", "u2"), help="with a real phone: plain adb or uiautomator2")
    replay.add_argument("--fallback", choices=("agent", "stop"), default="stop",
                        help="on a screen that differs: stop (default) or hand the rest to the agent and its model")
    replay.add_argument("--threshold", type=fraction, metavar="X",
                        help="the least screen similarity, 0-1, to replay a step (default replay.threshold, 0.8)")
    replay.add_argument("--log-dir", type=Path, metavar="DIR", help="where the replay's run directory goes "
                                                                    "(default: the run's logs.dir)")
    replay.add_argument("--quiet", action="store_true", help="print only the final summary")


def replay_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    device = device_overrides(args)
    if device:
        out["device"] = device
    if args.log_dir is not None:
        out["logs"] = {"dir": str(args.log_dir)}
    if args.threshold is not None:
        out["replay"] = {"threshold": args.threshold}
    return out


def run_replay(args: argparse.Namespace, out: TextIO) -> int:
    # the runtime is imported here, when the command runs: the parser (and --help) needs none of it
    from ufo_mobile.cli.operator import TerminalOperator
    from ufo_mobile.core.session import Session
    from ufo_mobile.core.trace import runs
    from ufo_mobile.replay import NoModel, ReplayPlan, load_trajectory
    from ufo_mobile.report.setup import REPLAY_ONLY
    from ufo_mobile.settings import settings_of_run

    run_dir: Path = args.run_dir
    trajectory = load_trajectory(run_dir)  # ConfigError: not a run directory, still going, nothing to replay
    settings = settings_of_run(runs.read_run(run_dir), overrides=replay_overrides(args),
                               source=str(run_dir / "run.json"))
    settings = on_a_real_phone(settings, args)
    plan = ReplayPlan(trajectory, fallback=args.fallback, source=f"run {trajectory.run_id}")
    agent = args.fallback == "agent"
    operator = TerminalOperator(sys.stdin, sys.stderr) if agent and sys.stdin is not None and sys.stdin.isatty() \
        else None
    # without a fallback no model is needed (nor its key); with one, the run's own model is built
    session = Session(settings, handle_signals=True, operator=operator, replay=plan,
                            model=None if agent else NoModel())
    return run_at_terminal(session, f"replay of {trajectory.run_id}: {settings.task.text}", out, quiet=args.quiet,
                           model=None if agent else REPLAY_ONLY)
