"""What ``run`` and ``report`` print: the header, one line per step, the summary.

Every piece of text that came from the model, the screen or a file is redacted first, then made
printable (control characters escaped) and bounded, in that order: a cut never shows part of a
secret, and nothing printed can forge a line or drive the terminal.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from typing import Any, TextIO

from pydantic import ValidationError

from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.trace.writer import Redactor
from ufo_mobile.safe_text import printable

ACTION_WIDTH, OUTCOME_WIDTH, DETAIL_LIMIT, TASK_LIMIT, SETUP_LIMIT = 48, 70, 300, 200, 200
_PHASES = {"data_collection": "obs", "llm_interaction": "llm", "action_execution": "act", "memory_update": "mem"}


def fit(text: str, width: int) -> str:
    """``text`` (already safe) cut to ``width`` characters with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


def is_terminal(out: TextIO) -> bool:
    """Whether ``out`` (or the stream a ``PipeSafeStream`` wraps) is a terminal."""
    stream = getattr(out, "inner", out)
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class PipeSafeStream:
    """A text stream whose reader may go away (``| head``): from then on, output is dropped.

    The command goes on (a run still finishes and records everything); only the printing stops.
    """

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.closed_pipe = False

    def write(self, text: str) -> int:
        if not self.closed_pipe:
            try:
                self.inner.write(text)
            except BrokenPipeError:
                self._closed()
        return len(text)

    def flush(self) -> None:
        if not self.closed_pipe:
            try:
                self.inner.flush()
            except BrokenPipeError:
                self._closed()

    def _closed(self) -> None:
        self.closed_pipe = True
        try:  # the interpreter flushes stdout at exit: give it somewhere harmless to go
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.inner.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass  # not backed by a descriptor (a StringIO): nothing flushes it at exit


class Console:
    """Formats what a run prints, safely (see the module docstring), and prints it to ``out``."""

    def __init__(self, out: TextIO, redactor: Redactor | None = None) -> None:
        self.out = out
        self.redactor = redactor or Redactor()
        # where ``print`` sends lines instead of ``out`` while a status line shows (``cli/live.py``)
        self.sink: Callable[[str], None] | None = None

    def safe(self, text: str, limit: int | None = None) -> str:
        return printable(self.redactor.text(text), limit)

    def print(self, line: str = "") -> None:
        if self.sink is not None:
            self.sink(line)
        else:
            print(line, file=self.out, flush=True)

    def header(self, run_id: str, task: str, setup: str | None = None) -> str:
        """``run ID: TASK  [direct · simulated phone (in-process) · scripted model demo_wifi.yaml]``:
        one line, ``setup`` from ``report/setup.py``'s ``describe_setup``."""
        line = f"run {run_id}: {self.safe(task, TASK_LIMIT)}"
        return f"{line}  [{self.safe(setup, SETUP_LIMIT)}]" if setup else line

    def step(self, step: StepContext) -> str:
        """One progress line: step, status, action, outcome, phase timings."""
        result = step.result
        return self._step(step.step, step.status, _actions_text([(a.name, a.render()) for a in step.actions]),
                          None if result is None else (result.success, result.summary), step.reason, step.timings)

    def recorded_step(self, line: dict[str, Any]) -> str:
        """The same line for a step read back from ``steps.jsonl``."""
        actions = line.get("actions") or ([line["action"]] if line.get("action") else [])
        shown: list[tuple[str, str]] = []
        for action in actions if isinstance(actions, list) else [actions]:
            try:
                call = ActionCall.model_validate(action)
                shown.append((call.name, call.render()))
            except ValidationError:
                shown.append((str(action)[:40], str(action)))
        rendered = _actions_text(shown)
        result = line.get("result")
        outcome = (bool(result.get("success")), str(result.get("summary", ""))) if isinstance(result, dict) else None
        timings = line.get("timings")
        return self._step(int(line.get("step") or 0), str(line.get("status", "?")), rendered, outcome,
                          str(line.get("reason") or ""), timings if isinstance(timings, dict) else {})

    def _step(self, number: int, status: str, action: str | None, result: tuple[bool, str] | None,
              reason: str, timings: dict[str, float]) -> str:
        shown = fit(self.safe(action), ACTION_WIDTH) if action else "-"
        if result is not None:
            outcome = ("ok   " if result[0] else "FAIL ") + self.safe(result[1])
        else:
            outcome = self.safe(reason) if reason else ""
        times = " ".join(f"{_PHASES.get(k, k)} {v * 1000:.0f}ms" for k, v in timings.items() if k != "memory_update")
        return (f"step {number:>3}  {self.safe(status, 10):<8}  {shown:<{ACTION_WIDTH}}  "
                f"{fit(outcome, OUTCOME_WIDTH)}  [{times}]")

    def summary(self, result: dict[str, Any]) -> str:
        """The closing lines, from a ``RunResult.to_json()`` or a ``run.json``."""
        turns = int(result.get("steps") or 0)
        steps = int(result["steps_used"]) if result.get("steps_used") is not None else turns
        head = f"{result.get('status')} after {steps} step{'s' if steps != 1 else ''}"
        if turns != steps:  # the budget counts actions and the answer; the model was asked more often
            head += f" ({turns} turn{'s' if turns != 1 else ''})"
        if result.get("duration_seconds") is not None:
            head += f" in {float(result['duration_seconds']):.1f} s"
        failed = int(result.get("actions_failed") or 0)  # a run that ended well despite them says so too
        if failed:
            head += f", {failed} action{'s' if failed != 1 else ''} failed"
        detail = self.safe(str(result.get("answer") or result.get("reason") or ""), DETAIL_LIMIT)
        return "\n".join([
            f"{head}: {detail}" if detail else head,
            *self.replay_lines(result),
            f"run directory: {self.safe(str(result.get('run_dir', '')))}",
            usage_line(result),
            *(self.safe(line) for line in role_lines(result)),
        ])

    def replay_lines(self, result: dict[str, Any]) -> list[str]:
        """What a replay did (``RunResult.replay``): how many steps, how it ended, the mismatch report;
        and the run cache's line (``RunResult.run_cache``)."""
        lines = []
        replay, cache = result.get("replay"), result.get("run_cache")
        if isinstance(replay, dict):
            done, of = int(replay.get("replayed") or 0), int(replay.get("recorded_steps") or 0)
            ended = {"finished": "finished without the model", "fell back": "handed over to the agent",
                     "stopped": "stopped"}.get(str(replay.get("ended")), "failed")
            at = f" at step {replay['at_step']}" if replay.get("at_step") and replay.get("ended") != "finished" else ""
            lines.append(f"replay of {self.safe(str(replay.get('source', '')), 120)}: {done} of {of} recorded "
                         f"steps replayed, {ended}{at}")
            lines += [f"  {self.safe(str(item), DETAIL_LIMIT)}" for item in replay.get("report") or []]
        if isinstance(cache, dict):
            state = "saved" if cache.get("saved") else "hit" if cache.get("hit") else "miss"
            note = f" ({self.safe(str(cache['note']), DETAIL_LIMIT)})" if cache.get("note") else ""
            lines.append(f"run cache: {state}{note}: {self.safe(str(cache.get('file') or '-'))}")
        return lines


def _actions_text(calls: list[tuple[str, str]]) -> str | None:
    """A turn's actions on the progress line (each a name and its rendering): the one it had, or each of
    several (a chain), in order: whole when they fit the column, else by name."""
    if len(calls) <= 1:
        return calls[0][1] if calls else None
    whole = "; ".join(rendered for _, rendered in calls)
    return whole if len(whole) <= ACTION_WIDTH else f"{len(calls)} actions: " + ", ".join(name for name, _ in calls)


def role_lines(result: dict[str, Any]) -> list[str]:
    """One line per role when more than one asked a model (``RunResult.usage_by_role``):
    ``  executor (gpt-4.1-mini): 6 calls, 20410 prompt + 512 completion tokens, $0.0089``."""
    roles = result.get("usage_by_role")
    if not isinstance(roles, dict) or len(roles) < 2:
        return []
    lines = []
    for role, u in roles.items():
        calls, cost = int(u.get("calls") or 0), u.get("cost_usd")
        price = "cost unknown" if cost is None else f"${float(cost):.4f}"
        lines.append(f"  {role} ({u.get('model', '?')}): {calls} call{'s' if calls != 1 else ''}, "
                     f"{int(u.get('prompt_tokens') or 0)} prompt + {int(u.get('completion_tokens') or 0)} "
                     f"completion tokens, {price}")
    return lines


def usage_line(result: dict[str, Any]) -> str:
    """``tokens: 5210 prompt (3072 cached) + 214 completion in 4 calls, cost $0.0123``; a cost that
    could not be priced says so instead of showing $0."""
    prompt, cached = int(result.get("prompt_tokens") or 0), int(result.get("cached_tokens") or 0)
    calls = int(result.get("model_calls") or 0)
    line = f"tokens: {prompt} prompt"
    if cached:
        line += f" ({cached} cached)"
    line += f" + {int(result.get('completion_tokens') or 0)} completion"
    if calls:
        line += f" in {calls} model call{'s' if calls != 1 else ''}"
    cost = result.get("cost_usd", 0.0)
    return line + (", cost unknown (no price for this model; see model.prices)" if cost is None
                   else f", cost ${float(cost):.4f}")
