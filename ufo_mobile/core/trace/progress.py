"""What a run is doing right now, as events for whoever watches it live (the terminal's renderer is
``ufo_mobile/cli/live.py``); nothing here knows how they are shown.

Three kinds of event: a phase of a step starts (``phase``: the phase's name, e.g. ``llm_interaction``;
``recording`` for the step's recorder), the model's thought is read from its reply (``thought``), and
a model call is tried again (``retry``: why, the wait, which attempt comes next of how many).

The processor loop (``ufo_mobile/core/processors/base.py``) reports phases and thoughts; a model
client (``ufo_mobile/core/llm/openai_chat.py``) reports its retries through ``report`` without
knowing which step it serves: the running step set a sink with ``reporting`` (a context variable,
so each run in one event loop reaches its own), and that sink fills in the step and the agent.
Text in an event is raw (the model's own words): whoever prints it redacts it first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

ProgressKind = Literal["phase", "thought", "retry"]


@dataclass(frozen=True)
class Progress:
    """One event of a run in flight (see the module docstring for the kinds)."""

    kind: ProgressKind
    step: int = 0  # the step it belongs to (filled in by the step's sink)
    agent: str = ""  # the agent running the step (filled in by the step's sink)
    phase: str = ""  # "phase": the phase that starts
    text: str = ""  # "thought": the thought; "retry": why the attempt failed
    delay: float = 0.0  # "retry": seconds before the next attempt
    attempt: int = 0  # "retry": the attempt about to be made (2 for the first retry)
    attempts: int = 0  # "retry": the most attempts the call may make


ProgressSink = Callable[[Progress], None]

_SINK: ContextVar[ProgressSink | None] = ContextVar("ufo_mobile_progress_sink", default=None)


def report(event: Progress) -> None:
    """Hand ``event`` to the sink of the step running in this context; nothing when none watches."""
    sink = _SINK.get()
    if sink is not None:
        sink(event)


@contextmanager
def reporting(sink: ProgressSink) -> Iterator[None]:
    """Within the block, ``report`` reaches ``sink`` (and tasks started in it inherit it)."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)
