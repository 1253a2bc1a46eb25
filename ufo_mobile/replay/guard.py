"""The check before every replayed step, and the recorded action made fit for the current screen.

``check`` compares the screen now with the one the recorded step was decided on: the app in front
must be the same, and the similarity of the controls (``ufo_mobile.replay.similarity``; the system
bars' left out, which one driver's dump has and another's not) must reach the threshold. Then each
control the action names must have a close partner on the current screen (agreement at least
``TARGET_MIN``: the same row, not just a row at the same place), and ``adapt`` rewrites the action
for it: a control ``index`` becomes its partner's index (the ``text`` it names stays, and the
action itself checks it again), a tap by coordinates that landed on a control moves with it (the same
place within its partner: a list scrolled, a row moved) and other coordinates are scaled to the
current screen's size, and in CodeAct
code the literal ``index=`` arguments are rewritten the same way. Text the run never recorded
(``[REDACTED]``) cannot be typed again: such a step is a mismatch.

A mismatch comes with a report, one line per item: the step, the app, the score against the
threshold, the controls missing and new, and what the action needed that is not there.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.replay.similarity import TARGET_MIN, Comparison, compare, describe, inner_labels
from ufo_mobile.replay.trajectory import TrajectoryStep

REDACTED = "[REDACTED]"
SYSTEM_UI = "com.android.systemui"
LISTED = 4
"""Controls named in a report line (the rest are counted)."""
LABEL_CHARS = 48

#: Arguments that are pixels on the x and y axis, per action (scaled to the current screen).
_POINTS: dict[str, tuple[tuple[str, str], ...]] = {
    "click_at": (("x", "y"),), "long_press_at": (("x", "y"),), "click_area": (("x1", "y1"), ("x2", "y2")),
}
_POINT_LISTS = ("coordinate", "coordinate2")  # swipe: [x, y]


@dataclass
class Verdict:
    """The outcome of checking one step: go ahead (with ``action``) or not (with the ``report``)."""

    ok: bool
    score: float
    threshold: float
    app: str
    recorded_app: str
    action: ActionCall | None = None
    index_map: dict[int, int] = field(default_factory=dict)
    problem: str = ""  # one line: why not
    report: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "score": self.score, "threshold": self.threshold, "app": self.app,
                "recorded_app": self.recorded_app, "index_map": {str(k): v for k, v in self.index_map.items()},
                "action": self.action.model_dump(mode="json") if self.action else None, "problem": self.problem,
                "report": self.report}


def _named(controls: Sequence[Mapping[str, Any]], indices: Sequence[int]) -> str:
    by_index = {int(c.get("index", 0)): c for c in controls}
    labels = inner_labels(controls)
    shown = []
    for i in indices[:LISTED]:
        name = describe(by_index.get(i), LABEL_CHARS)
        if "'" not in name and labels.get(i):
            label = labels[i] if len(labels[i]) <= LABEL_CHARS else labels[i][: LABEL_CHARS - 1] + "…"
            name += f" {label!r}"
        shown.append(name)
    more = f" and {len(indices) - LISTED} more" if len(indices) > LISTED else ""
    return ", ".join(shown) + more


def report_lines(step: TrajectoryStep, app: str, comparison: Comparison, threshold: float,
                 current: Sequence[Mapping[str, Any]], problem: str) -> list[str]:
    """The mismatch report: one line per item."""
    what = step.action.render() if step.action is not None else "FINISH"
    relation = ">=" if comparison.score >= threshold else "<"
    lines = [f"step: recorded step {step.step} ({step.agent}): {what}",
             f"app: {app or '?'}" + (" (as recorded)" if app == step.app else f" (recorded: {step.app or '?'})"),
             f"score: {comparison.score:.2f} {relation} threshold {threshold:.2f}"]
    if comparison.missing:
        lines.append(f"missing: {len(comparison.missing)} of {len(step.controls)} recorded controls: "
                     f"{_named(step.controls, comparison.missing)}")
    if comparison.new:
        lines.append(f"new: {len(comparison.new)} of {len(current)} controls: {_named(current, comparison.new)}")
    if problem:
        lines.append(f"problem: {problem}")
    return lines


def _indices(action: ActionCall, params: Mapping[str, Sequence[str]]) -> list[int] | None:
    """The control indices the action names; None when CodeAct code computes one."""
    if action.name != "code":
        index = action.args.get("index")
        return [index] if isinstance(index, int) and not isinstance(index, bool) else []
    found: list[int] = []
    for node in ast.walk(ast.parse(str(action.args.get("code", "")))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        for value in _index_nodes(node, params.get(node.func.id, ())):
            if not (isinstance(value, ast.Constant) and isinstance(value.value, int)):
                return None
            found.append(value.value)
    return found


def _index_nodes(call: ast.Call, names: Sequence[str]) -> list[ast.expr]:
    nodes = [k.value for k in call.keywords if k.arg == "index"]
    if "index" in names and names.index("index") < len(call.args):
        nodes.append(call.args[names.index("index")])
    return nodes


class _Remap(ast.NodeTransformer):
    def __init__(self, index_map: Mapping[int, int], params: Mapping[str, Sequence[str]]) -> None:
        self.index_map, self.params = index_map, params

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name):
            for value in _index_nodes(node, self.params.get(node.func.id, ())):
                if isinstance(value, ast.Constant) and isinstance(value.value, int):
                    value.value = self.index_map.get(value.value, value.value)
        return node


def adapt(action: ActionCall, index_map: Mapping[int, int], scale: tuple[float, float],
          params: Mapping[str, Sequence[str]]) -> ActionCall:
    """``action`` for the current screen: indices through ``index_map``, pixels times ``scale``."""
    args = dict(action.args)
    if action.name == "code":
        if any(index_map.get(i, i) != i for i in _indices(action, params) or []):
            tree = _Remap(index_map, params).visit(ast.parse(str(args.get("code", ""))))
            args["code"] = ast.unparse(tree)
    elif isinstance(args.get("index"), int):
        args["index"] = index_map.get(args["index"], args["index"])
    sx, sy = scale
    if (sx, sy) != (1.0, 1.0):
        for x, y in _POINTS.get(action.name, ()):
            if isinstance(args.get(x), int | float) and isinstance(args.get(y), int | float):
                args[x], args[y] = round(args[x] * sx), round(args[y] * sy)
        for key in _POINT_LISTS:
            point = args.get(key)
            if isinstance(point, list) and len(point) == 2:
                args[key] = [round(point[0] * sx), round(point[1] * sy)]
    return action.model_copy(update={"args": args})


def _holds_redacted(value: Any) -> bool:
    if isinstance(value, str):
        return REDACTED in value
    if isinstance(value, dict):
        return any(_holds_redacted(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_redacted(v) for v in value)
    return False


def _action_problem(step: TrajectoryStep, comparison: Comparison, current: Sequence[Mapping[str, Any]],
                    params: Mapping[str, Sequence[str]]) -> str:
    """Why the recorded action cannot run on this screen, or ''."""
    action = step.action
    if action is None:
        return ""
    tapped = _tapped(step)
    if tapped is not None and comparison.agreement.get(int(tapped["index"]), 0.0) < TARGET_MIN:
        named = _named(step.controls, [int(tapped["index"])])
        return f"the control the recorded tap landed on is not on this screen: {named}"
    if _holds_redacted(action.args):
        return "the recorded action holds text the run did not keep ([REDACTED]); it cannot be typed again"
    try:
        wanted = _indices(action, params)
    except SyntaxError:
        return "the recorded code does not parse"
    if wanted is None:
        if any(a != b for a, b in comparison.pairs.items()):
            return "the recorded code computes a control index, and the controls moved"
        return ""
    lost = [i for i in wanted if comparison.agreement.get(i, 0.0) < TARGET_MIN]
    if not lost:
        return ""
    instead = [comparison.pairs[i] for i in lost if i in comparison.pairs]
    there = f" (in its place: {_named(current, instead)})" if instead else ""
    return f"the control the action names is not on this screen: {_named(step.controls, lost)}{there}"


def _app_window(controls: Sequence[Mapping[str, Any]], app: str) -> list[Mapping[str, Any]]:
    """The controls without the system bars' (a dump of every window has the clock and the battery
    first; a dump of the app's window does not), unless the system UI is the app in front."""
    return [c for c in controls if c.get("package") != SYSTEM_UI or app == SYSTEM_UI]


def check(step: TrajectoryStep, app: str, current: Sequence[Mapping[str, Any]], screen: tuple[int, int],
          threshold: float, params: Mapping[str, Sequence[str]] | None = None) -> Verdict:
    """Whether ``step`` can be replayed on the current screen, and its action adapted to it.

    ``params`` maps each tool's name to its parameter names (for CodeAct calls that pass the
    control index by position).
    """
    params = params or {}
    current = _app_window(current, app)
    comparison = compare(_app_window(step.controls, step.app), step.screen, current, screen)
    verdict = Verdict(ok=False, score=comparison.score, threshold=threshold, app=app, recorded_app=step.app)
    extra = ""  # a problem the app and score lines do not already say
    if step.kind == "blocked":
        verdict.problem = extra = step.reason
    elif app != step.app:
        verdict.problem = f"another app is in front: {app or '?'}, not {step.app or '?'}"
    elif comparison.score < threshold:
        verdict.problem = f"the screen differs (score {comparison.score:.2f} < {threshold:.2f})"
    else:
        verdict.problem = extra = _action_problem(step, comparison, current, params)
    if verdict.problem:
        verdict.report = report_lines(step, app, comparison, threshold, current, extra)
        return verdict
    verdict.ok = True
    verdict.index_map = dict(comparison.pairs)
    if step.action is not None:
        w0, h0 = step.screen
        scale = (screen[0] / w0 if w0 else 1.0, screen[1] / h0 if h0 else 1.0)
        verdict.action = _through_target(step, adapt(step.action, comparison.pairs, scale, params), comparison,
                                         current)
    return verdict


def _tapped(step: TrajectoryStep) -> Mapping[str, Any] | None:
    """The recorded control under a tap by coordinates (the smallest that holds the point), if any."""
    action = step.action
    if action is None or action.name not in ("click_at", "long_press_at"):
        return None
    x, y = action.args.get("x"), action.args.get("y")
    if not (isinstance(x, int | float) and isinstance(y, int | float)):
        return None
    under = [c for c in step.controls if _holds(c.get("bounds"), x, y)]
    return min(under, key=lambda c: _area(c["bounds"])) if under else None


def _through_target(step: TrajectoryStep, action: ActionCall, comparison: Comparison,
                    current: Sequence[Mapping[str, Any]]) -> ActionCall:
    """A tap by coordinates moved with the control it landed on: the same place within its partner on
    the current screen (a list scrolled, a row moved), not just the recorded point scaled."""
    target = _tapped(step)
    partner_index = comparison.pairs.get(int(target["index"])) if target is not None else None
    partner = next((c for c in current if c.get("index") == partner_index), None)
    if target is None or partner is None or step.action is None:
        return action
    (l0, t0, r0, b0), (l1, t1, r1, b1) = target["bounds"], partner["bounds"]
    x, y = step.action.args["x"], step.action.args["y"]
    fx = (x - l0) / (r0 - l0) if r0 > l0 else 0.5
    fy = (y - t0) / (b0 - t0) if b0 > t0 else 0.5
    return action.model_copy(update={"args": {**action.args, "x": round(l1 + fx * (r1 - l1)),
                                              "y": round(t1 + fy * (b1 - t1))}})


def _holds(bounds: Any, x: float, y: float) -> bool:
    return isinstance(bounds, list | tuple) and len(bounds) == 4 and bounds[0] <= x < bounds[2] \
        and bounds[1] <= y < bounds[3]


def _area(bounds: Sequence[int]) -> int:
    return max(0, bounds[2] - bounds[0]) * max(0, bounds[3] - bounds[1])
