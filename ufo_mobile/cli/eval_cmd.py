"""``python -m ufo_mobile eval SUITE``: measure an agent on a task suite, and compare two evaluations.

An evaluation gets a directory of its own (``<log dir>/eval-<time>-<suite>-<random>/``) holding
``results.jsonl`` (one record per run, written as each run ends), ``summary.json``, ``eval.html``
(the score and the runs, failures first, each linking its report: ``eval/page.py``) and the runs'
directories under ``runs/``. At a terminal the runs in flight and the score so far are shown live
(``eval/live.py``); elsewhere one whole line per run. ``--compare A B`` also writes its page in B's
directory. Exit codes: 0 the evaluation ran (whatever its score; with
``--min-success`` 1 when the success rate is below it), 2 usage or configuration error (a log
directory that cannot be written at the start included), ``EXIT_CANNOT_WRITE`` (3) a write failed
on the way (a full disk): the evaluation stopped there, the records and scores of the runs that
ended are kept and printed, and one line on stderr says what could not be written; 128+N stopped
by signal N (the records of every run that ended are kept).
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import secrets
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ufo_mobile.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    FORMATS,
    MODES,
    PROVIDERS,
    err,
    fraction,
    model_overrides,
    positive,
)
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.safe_text import printable
from ufo_mobile.shipped import suite_path

if TYPE_CHECKING:  # the evaluation is imported when the command runs: the parser (and --help) needs none of it
    from rich.console import Console as RichConsole

    from ufo_mobile.eval import SuiteTask
    from ufo_mobile.eval.campaign import BuiltinModel, Campaign
    from ufo_mobile.eval.results import Comparison, Summary, Totals
    from ufo_mobile.eval.table import Grid
    from ufo_mobile.settings import Settings

#: The evaluation stopped because a write failed (a full or read-only disk); not the agent's score.
EXIT_CANNOT_WRITE = 3


def add_eval_parser(sub: Any) -> None:
    """The ``eval`` command's arguments (``sub``: the command line's subparsers)."""
    ev = sub.add_parser(
        "eval", help="measure an agent on a task suite (success by checks on the phone's state), or compare two",
        description="Run every task of a suite (the shipped one is named 'suite') on a fresh simulated phone, "
                    "judge each run by its check on the phone's state (or on the answer), and print and write the "
                    "results: results.jsonl (one record per run), summary.json, eval.html (the score and every "
                    "run, failures first, each linking its report), success rate, pass@k and totals. With --compare "
                    "A B, put two evaluations side by side instead.")
    ev.add_argument("suite", type=Path, nargs="*", metavar="SUITE",
                    help="suite folders or task files; 'suite' is the shipped suite")
    ev.add_argument("--tasks", metavar="PATTERNS",
                    help="only the tasks whose id matches one of these comma-separated patterns, e.g. 'shop-*,clock-*'")
    ev.add_argument("--model", metavar="NAME",
                    help="oracle (each task's own reply script: proves every check can pass), give-up (a model that "
                         "fails at once: proves every check can fail), or a real model's name (model.name) with "
                         "--provider and --base-url as for run; default: the defaults file's model")
    ev.add_argument("--provider", choices=PROVIDERS,
                    help="the model's kind (model.kind), as for run")
    ev.add_argument("--base-url", metavar="URL", help="the server's API URL (model.base_url), as for run")
    ev.add_argument("--format", choices=FORMATS, help="as for run")
    ev.add_argument("--iphone", action="store_true",
                    help="run each task on the simulated phone served as an iPhone: an emulated WebDriverAgent "
                         "in this process, driven through wdapy as a real iPhone is (needs the ios extra)")
    ev.add_argument("--mode", choices=MODES, help="how the agent works, as for run")
    ev.add_argument("--repeat", type=positive, default=1, metavar="K",
                    help="run each task K times, the r-th time with the variant of seed SEED+r (default 1); "
                         "pass@K is given with K > 1")
    ev.add_argument("--seed", type=int, default=0, metavar="SEED",
                    help="the first variant's seed (default 0): parameters are drawn from it, so a seed is the "
                         "same variant on every machine")
    ev.add_argument("--parallel", type=positive, default=1, metavar="N",
                    help="runs at a time, each on its own simulated phone (default 1); helps with a slow model")
    ev.add_argument("--log-dir", type=Path, metavar="DIR", help="where the evaluation's directory goes (default logs/)")
    ev.add_argument("--config", type=Path, metavar="FILE",
                    help="defaults file (default: default.yaml in or above the suite folder)")
    ev.add_argument("--min-success", type=fraction, metavar="RATE",
                    help="exit 1 when the success rate is below RATE (0-1), e.g. for CI")
    ev.add_argument("--compare", type=Path, nargs=2, metavar=("A", "B"),
                    help="compare two evaluations (their results.jsonl, or the directories holding them); the "
                         "page compare-<A>.html is written in B's directory")
    ev.add_argument("--quiet", action="store_true",
                    help="no line per run and no live view, only the table and the scores")


def run_eval(args: argparse.Namespace, out: TextIO) -> int:
    import asyncio

    from ufo_mobile.eval import oracle_model
    from ufo_mobile.eval.campaign import Campaign, plan
    from ufo_mobile.eval.live import EvalBoard, LiveView, PlainView, QuietView
    from ufo_mobile.eval.results import ResultsWriter

    console = _console(out)
    if args.compare is not None:
        if args.suite:
            raise ConfigError("give a suite to run, or --compare A B, not both", key="--compare")
        return run_compare(console, *args.compare)
    if not args.suite:
        raise ConfigError("give a suite folder or task files (the shipped suite is 'suite')", key="suite")
    args.suite = [suite_path(path) for path in args.suite]
    tasks = select(load_tasks(args.suite), args.tasks)
    builtin, settings = eval_settings(args)
    if args.iphone:  # an iPhone's screen
        from ufo_mobile.sim.servers.wda import IPHONE_SIZE

        sim = settings.device.sim.model_copy(update={"width": IPHONE_SIZE[0], "height": IPHONE_SIZE[1]})
        settings = settings.model_copy(update={"device": settings.device.model_copy(update={"sim": sim})})
    runs = plan(tasks, repeat=args.repeat, seed=args.seed)
    if builtin == "oracle":  # the oracle has replies for the mode: checked before anything is made
        for planned in runs:
            oracle_model(planned.instance, settings.mode)
    directory = eval_dir(settings.logs.dir, args.suite[0])
    writer = ResultsWriter(directory)
    board = EvalBoard(runs)
    view = (QuietView(console, board) if args.quiet else LiveView(console, board) if console.is_terminal
            else PlainView(console, board))

    def on_record(record: dict[str, Any]) -> None:
        try:
            writer.write(record)
        except RunWriteError as exc:  # kept in memory: still in the table, the scores and summary.json
            campaign.cannot_write(exc)
        view.ended(record)

    campaign = Campaign(runs, settings=settings, log_dir=directory / "runs", builtin=builtin,
                        parallel=args.parallel, on_record=on_record, on_event=view.event,
                        **({"driver": served_iphone(settings)} if args.iphone else {}))
    if not args.quiet:  # --quiet: only the table and the scores
        console.print(f"eval: {len(tasks)} tasks x {args.repeat} = {len(runs)} runs, model "
                      f"{printable(campaign.model_label)} ({settings.model.reply_format} format), mode {settings.mode} "
                      f"-> {printable(str(directory))}",
                      markup=False, highlight=False)
    started = time.monotonic()
    try:
        with view:
            records = asyncio.run(_run(campaign))
    finally:
        writer.close()
    meta = {"suite": [str(p) for p in args.suite], "model": campaign.model_label,
            "format": settings.model.reply_format, "mode": settings.mode,
            "phone": "iphone" if args.iphone else "android",
            "setup": eval_setup(settings, builtin), "repeat": args.repeat, "seed": args.seed,
            "planned_runs": len(runs), "stopped": campaign.stopped,
            "wall_seconds": round(time.monotonic() - started, 3)}
    return end_eval(console, campaign, records, meta, writer.path, min_success=args.min_success)


def end_eval(console: RichConsole, campaign: Campaign, records: list[dict[str, Any]], meta: dict[str, Any],
             results: Path, *, min_success: float | None) -> int:
    """Write ``summary.json`` (``meta`` and the scores) next to ``results`` (the ``results.jsonl``),
    print the table, the scores and how the evaluation ended; the exit code."""
    from ufo_mobile.eval.page import write_eval_page
    from ufo_mobile.eval.results import summarize, write_summary

    summary = summarize(records) if records else None
    summary_error = page_error = page = None
    if summary is None:
        console.print(f"no run ended ({printable(campaign.stopped or 'nothing to run')})", markup=False)
    else:
        try:
            write_summary(results.parent, summary, meta)
        except RunWriteError as exc:
            summary_error = exc
        try:
            page = write_eval_page(results.parent, records, summary, meta)
        except RunWriteError as exc:
            page_error = exc
        print_results(console, records, summary)
    if campaign.stopped is not None:
        stopped = summary.totals.interrupted if summary is not None else 0
        console.print(f"stopped ({printable(campaign.stopped)}): {len(records) - stopped} of "
                      f"{meta['planned_runs']} runs ended" + (f", {stopped} interrupted" if stopped else "")
                      + "; the records of every run are kept", markup=False, highlight=False)
    console.print(f"results: {printable(str(results))}", markup=False, highlight=False)
    if page is not None:
        console.print(f"report: {printable(str(page))}", markup=False, highlight=False)
    failed = campaign.write_error is not None or summary_error is not None or page_error is not None
    if failed:
        err(f"error: {cannot_write_line(campaign.write_error, summary_error, summary is not None, page_error)}")
    if campaign.stop_signal is not None:
        return 128 + campaign.stop_signal
    if failed:
        return EXIT_CANNOT_WRITE
    if campaign.stopped is not None:
        return 128 + signal.SIGINT
    if min_success is not None and (summary is None or summary.totals.success_rate < min_success):
        console.print(f"success rate below --min-success {min_success:g}", markup=False)
        return EXIT_FAIL
    return EXIT_OK


def cannot_write_line(first: RunWriteError | None, summary_error: RunWriteError | None, ended: bool,
                      page_error: RunWriteError | None = None) -> str:
    """The one line that says what could not be written, and whether ``summary.json`` (and ``eval.html``) was."""
    from ufo_mobile.eval.page import PAGE_FILE

    parts = [printable(str(first))] if first is not None else []
    if page_error is not None:
        parts.append(f"{PAGE_FILE} could not be written: {printable(str(page_error))}")
    if summary_error is not None:
        parts.append(f"summary.json could not be written either: {printable(str(summary_error))}"
                     if first is not None else f"summary.json could not be written: {printable(str(summary_error))}")
    elif first is not None:
        parts.append("the evaluation stopped there; summary.json holds the runs that ended" if ended
                     else "the evaluation stopped there, before any run ended")
    return "; ".join(parts)


async def _run(campaign: Campaign) -> list[dict[str, Any]]:
    """The campaign, with SIGINT/SIGTERM/SIGHUP stopping it (a second one abandons the runs' steps)."""
    from ufo_mobile.core.session import install_stop_signals

    restore = install_stop_signals(campaign.stop, lambda signum: campaign.abandon())
    try:
        return await campaign.run()
    finally:
        restore()


def load_tasks(paths: Sequence[Path]) -> list[SuiteTask]:
    """The tasks of suite folders and task files, in order, each once."""
    from ufo_mobile.eval import load_suite, load_task

    tasks: dict[str, SuiteTask] = {}
    for path in paths:
        found = load_suite(path) if path.is_dir() else [load_task(path)] if path.is_file() else None
        if found is None:
            raise ConfigError("no such suite folder or task file", path=str(path))
        for task in found:
            if task.id in tasks and tasks[task.id].source != task.source:
                raise ConfigError(f"a second task with the id {task.id!r} (the first: {tasks[task.id].source})",
                                  path=str(task.source), key="id")
            tasks[task.id] = task
    return list(tasks.values())


def select(tasks: list[SuiteTask], patterns: str | None) -> list[SuiteTask]:
    if patterns is None:
        return tasks
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    ids = [t.id for t in tasks]
    for pattern in wanted:  # each pattern names something: a typo is not a smaller evaluation
        if not fnmatch.filter(ids, pattern):
            near = difflib.get_close_matches(pattern, ids, n=3)
            listed = ", ".join(ids[:6]) + (", ..." if len(ids) > 6 else "")
            hint = f" (did you mean {', '.join(near)}?)" if near else f" ({len(ids)} tasks: {listed})"
            raise ConfigError(f"no task id matches {pattern!r}{hint}", key="--tasks")
    return [t for t in tasks if any(fnmatch.fnmatchcase(t.id, p) for p in wanted)]


def eval_settings(args: argparse.Namespace) -> tuple[BuiltinModel | None, Settings]:
    """The built-in model asked for (if any), and the settings every run starts from."""
    from ufo_mobile.eval.campaign import BUILTIN_MODELS
    from ufo_mobile.settings import load_base_settings

    builtin: BuiltinModel | None = args.model if args.model in BUILTIN_MODELS else None
    overrides: dict[str, Any] = {"device": {"kind": "sim"}}
    if builtin is not None:
        if args.provider not in (None, "scripted") or args.base_url is not None:
            raise ConfigError(f"--model {builtin} is built in: it takes no --provider or --base-url", key="--model")
        overrides["model"] = {"kind": "scripted", "script": "-"}  # the runs get their model from the campaign
        if args.format is not None:  # ... which answers in this format
            overrides["model"]["format"] = args.format
    else:
        overrides["model"] = model_overrides(args)
    if args.mode is not None:
        overrides["mode"] = args.mode
    if args.log_dir is not None:
        overrides["logs"] = {"dir": str(args.log_dir)}
    near = args.suite[0] if args.suite[0].is_dir() else args.suite[0].parent
    try:
        settings = load_base_settings(near, config_path=args.config, overrides=overrides)
    except ConfigError as exc:
        if exc.message.startswith("the scripted model needs"):
            raise ConfigError("eval needs a model: --model oracle, --model give-up, or a real model "
                              "(--provider, --model, --base-url)", key="--model") from None
        raise
    return builtin, settings


def served_iphone(settings: Settings) -> Any:
    """The driver factory of ``--iphone``: each task's phone behind its own emulated WebDriverAgent.

    Raises:
        ConfigError: the ios extra (wdapy) is not installed.
    """
    from ufo_mobile.core.device.wda import ServedIPhone, check_ios_extra

    check_ios_extra("--iphone")
    timeout = settings.device.command_timeout_seconds
    return lambda phone: ServedIPhone(phone, timeout=timeout)


def eval_setup(settings: Settings, builtin: BuiltinModel | None) -> str:
    """The line that says what the runs ran with (``report/setup.py``): mode, phone, model."""
    from ufo_mobile.report.setup import describe_setup

    model = {"oracle": "oracle (each task's own reply script)", "give-up": "give-up (a model that fails at once)"}
    return describe_setup(settings.model_dump(mode="json"), model=model[builtin] if builtin is not None else None)


def run_compare(console: RichConsole, a: Path, b: Path) -> int:
    """``--compare A B``: the comparison printed, and its page written in B's directory."""
    from ufo_mobile.eval.page import write_compare_page
    from ufo_mobile.eval.results import compare, read_results

    records_a, records_b = read_results(a), read_results(b)
    comparison = compare(records_a, records_b)
    print_comparison(console, comparison, a, b)
    try:
        page = write_compare_page(comparison, records_a, records_b, a, b)
    except RunWriteError as exc:
        err(f"error: the comparison page could not be written: {printable(str(exc))}")
        return EXIT_CANNOT_WRITE
    console.print(f"report: {printable(str(page))}", markup=False, highlight=False)
    return EXIT_OK


def eval_dir(log_dir: Path, suite: Path) -> Path:
    name = (suite.name if suite.is_dir() else suite.stem) or "suite"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return log_dir / f"eval-{stamp}-{printable(name)[:40]}-{secrets.token_hex(2)}"


def _console(out: TextIO) -> RichConsole:
    """A rich console on ``out``: colours and tables only on a terminal; elsewhere plain lines that are
    never wrapped (``soft_wrap``), whatever the width (``COLUMNS``) says."""
    from rich.console import Console as RichConsole

    from ufo_mobile.cli.console import is_terminal

    tty = is_terminal(out)
    return RichConsole(file=out, force_terminal=tty, highlight=False, markup=False, emoji=False, soft_wrap=not tty)


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def results_grid(records: list[dict[str, Any]], summary: Summary) -> Grid:
    """The results table: a row per run (its run id shown in the plain form only), and the totals."""
    from ufo_mobile.eval.live import REASON_LIMIT
    from ufo_mobile.eval.results import is_interrupted
    from ufo_mobile.eval.table import Grid

    t = summary.totals
    grid = Grid(["task", "seed", "kind", "outcome", "check", "steps", "time", "tokens", "cost", "run"],
                footer=["total", "", "", "", f"{t.passed}/{t.ended}", str(t.steps), f"{t.seconds:.1f}s",
                        f"{t.prompt_tokens + t.completion_tokens:,}", _cost(t.cost_usd), ""],
                right=frozenset({1, 5, 6, 7, 8}), plain_only=1)
    for r in records:
        stopped = is_interrupted(r)
        reason = printable(str(r["reason"]), REASON_LIMIT)
        outcome = (f"interrupted: {reason}" if stopped else r["status"] if r["status"] == "FINISH"
                   else f"FAIL: {reason}")
        check = "-" if stopped else "pass" if r["passed"] else "FAIL"  # a run that did not end is not judged
        grid.rows.append([printable(r["task_id"]), str(r["seed"]), printable(r["kind"]), outcome, check,
                          f"{r['steps']}/{r['budget']}", f"{float(r['duration_seconds']):.1f}s",
                          f"{int(r['prompt_tokens'] or 0) + int(r['completion_tokens'] or 0):,}",
                          _cost(r["cost_usd"]), printable(str(r.get("run_id") or "-"))])
    return grid


def print_results(console: RichConsole, records: list[dict[str, Any]], summary: Summary) -> None:
    from rich.text import Text

    from ufo_mobile.eval.results import is_interrupted
    from ufo_mobile.eval.table import show

    show(console, results_grid(records, summary), "results")
    failed = [r for r in records if not r["passed"] and not is_interrupted(r)]
    for r in failed:
        console.print(Text(f"  not passed: {printable(r['task_id'])} s{r['seed']}: {printable(str(r['why']))}"),
                      soft_wrap=True)  # whole: a check's explanation bounds the values it quotes
    console.print(score_lines(summary))


def score_lines(summary: Summary) -> str:
    t = summary.totals
    pass_at = "; ".join(f"pass@{k} {v:.3f}" for k, v in summary.pass_at.items())
    kinds = ", ".join(f"{kind} {k.passed}/{k.ended}" + (f" ({k.interrupted} interrupted)" if k.interrupted else "")
                      for kind, k in summary.by_kind.items())
    runs = f"{t.passed}/{t.ended} runs that ended" if t.interrupted else f"{t.passed}/{t.runs} runs"
    return "\n".join([
        f"success rate: {runs} ({f'{t.success_rate:.1%}' if t.ended else 'none ended'})"
        + (f"; {pass_at}" if pass_at else "")
        + (f"; of the rest, {t.needs_person} stopped for a person (nobody could answer or approve)"
           if t.needs_person else "")
        + (f"; {t.interrupted} interrupted, not counted" if t.interrupted else ""),
        f"by kind: {kinds}",
        f"totals: {summary.tasks} tasks, {t.steps} steps, {t.seconds:.1f}s, {t.prompt_tokens:,} prompt + "
        f"{t.completion_tokens:,} completion tokens, cost {_cost(t.cost_usd)}",
    ])


def _rate(t: Totals | None) -> str:
    if t is None:
        return "-"
    return f"{t.passed}/{t.ended}" + (f" (+{t.interrupted} interrupted)" if t.interrupted else "")


def _steps(t: Totals | None) -> str:
    """Steps per run."""
    return "-" if t is None or not t.runs else f"{t.steps / t.runs:.1f}"


def print_comparison(console: RichConsole, comparison: Comparison, a: Path, b: Path) -> None:
    from rich.text import Text

    from ufo_mobile.eval.table import Grid, show

    grid = Grid(["task", "A", "B", "change", "steps A", "steps B"], right=frozenset({1, 2, 4, 5}))
    for change in comparison.tasks:
        delta = change.delta
        word = ("only in A" if change.b is None else "only in B" if change.a is None
                else "no run ended" if delta is None
                else "better" if delta > 0 else "worse" if delta < 0 else "same")
        grid.rows.append([printable(change.task_id), _rate(change.a), _rate(change.b), word, _steps(change.a),
                          _steps(change.b)])
    console.print(Text(f"A: {printable(str(a))}\nB: {printable(str(b))}"), soft_wrap=True)
    show(console, grid)
    sa, sb = comparison.a.totals, comparison.b.totals
    points = (sb.success_rate - sa.success_rate) * 100
    lines = [f"success rate: A {sa.success_rate:.1%} ({_rate(sa)}) -> B {sb.success_rate:.1%} "
             f"({_rate(sb)}), {points:+.1f} points",
             f"tasks: {len(comparison.better)} better, {len(comparison.worse)} worse",
             f"tokens: A {sa.prompt_tokens + sa.completion_tokens:,} -> B {sb.prompt_tokens + sb.completion_tokens:,}"
             f"; cost: A {_cost(sa.cost_usd)} -> B {_cost(sb.cost_usd)}"]
    for k in sorted(set(comparison.a.pass_at) & set(comparison.b.pass_at)):
        lines.append(f"pass@{k}: A {comparison.a.pass_at[k]:.3f} -> B {comparison.b.pass_at[k]:.3f}")
    console.print("\n".join(lines), markup=False, highlight=False)
