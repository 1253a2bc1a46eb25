"""Stopping runs: the signals a run turns into FAIL with a reason, and the controls that stop one
run (``RunControl``) or the runs of a command that runs many (``RunGroup``) from outside.

A first signal stops the run after recording its step, a second stops waiting for anything, a
third gets the default action (the process dies at once; the next run marks the run cut off).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Protocol

from ufo_mobile.core.context import RunContext

#: The signals a run turns into FAIL with a reason, and that reason.
STOP_SIGNALS: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated",
                                signal.SIGHUP: "hung up"}


def install_stop_signals(stop: Callable[[str, int], None], abandon: Callable[[int], None]) -> Callable[[], None]:
    """SIGINT, SIGTERM and SIGHUP on the running loop, as every command that runs tasks takes them:
    the first calls ``stop(reason, signum)`` (``STOP_SIGNALS``' reason: end the runs after recording
    their step), the second ``abandon(signum)`` (stop waiting for them), the third gets the default
    action (the process dies at once; the next run marks the run cut off). A signal the parent set
    to be ignored stays ignored: ``nohup`` (SIGHUP), or a job started in the background by a
    non-interactive shell (SIGINT), must not be stopped by it. Returns the function that removes
    the handlers."""
    loop = asyncio.get_running_loop()
    received = 0

    def on_signal(signum: int) -> None:
        nonlocal received
        received += 1
        if received == 1:
            stop(STOP_SIGNALS[signum], signum)
        elif received == 2:
            abandon(signum)
        else:
            restore()
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    def restore() -> None:
        for signum in handled:
            loop.remove_signal_handler(signum)

    handled = [signum for signum in STOP_SIGNALS if signal.getsignal(signum) != signal.SIG_IGN]
    for signum in handled:
        loop.add_signal_handler(signum, on_signal, signum)
    return restore


def stop_run_on_signals(ctx: RunContext) -> Callable[[], None]:
    """The stop signals for one run: the first interrupts ``ctx``, the second abandons it. Returns
    the function that removes the handlers."""

    def stop(reason: str, signum: int) -> None:
        ctx.interrupt(reason, signum)
        ctx.logger.warning("signal", signal=signal.Signals(signum).name, reason=ctx.stop_reason)

    def abandon(signum: int) -> None:
        ctx.logger.warning("signal_again", signal=signal.Signals(signum).name)
        ctx.abandon()

    return install_stop_signals(stop, abandon)


class Stoppable(Protocol):
    """A session as a control sees it: its context, once the run has one."""

    @property
    def context(self) -> RunContext | None:
        """The run's context; None until the run has started."""


class RunControl:
    """Stops one session from outside (a signal to a command running many): ``interrupt`` as the
    first Ctrl-C does to ``run``, ``abandon`` as the second. Safe to call before the session has
    started; pass ``started`` as the session's ``on_start``."""

    def __init__(self) -> None:
        self.session: Stoppable | None = None
        self.stop: tuple[str, int | None] | None = None
        self.abandoned = False

    def started(self, session: Stoppable) -> None:
        """The session has started: a stop asked before now reaches it at once."""
        self.session = session
        if self.stop is not None:
            self.interrupt(*self.stop)
        if self.abandoned:
            self.abandon()

    def interrupt(self, reason: str, signum: int | None = None) -> None:
        """Stop the run after its step, ending it in FAIL with ``reason`` (the first reason given
        stands); ``signum``: the signal that asked, if one did."""
        self.stop = self.stop or (reason, signum)
        ctx = self.session.context if self.session is not None else None
        if ctx is not None:
            ctx.interrupt(*self.stop)

    def abandon(self) -> None:
        """Stop waiting for the run: its step is cancelled and the run recorded as it stands."""
        self.abandoned = True
        ctx = self.session.context if self.session is not None else None
        if ctx is not None:
            ctx.abandon()


class RunGroup:
    """The runs in flight of a command that runs many (``eval``, ``batch``), stopped together: a run
    that starts after a stop is stopped as it starts."""

    def __init__(self) -> None:
        self.live: set[RunControl] = set()
        self.stop: tuple[str, int | None] | None = None
        self.abandoned = False

    def join(self) -> RunControl:
        """A control for a run about to start (``leave`` it when the run has ended)."""
        control = RunControl()
        if self.stop is not None:
            control.interrupt(*self.stop)
        if self.abandoned:
            control.abandon()
        self.live.add(control)
        return control

    def leave(self, control: RunControl) -> None:
        """The run of ``control`` has ended: later stops no longer reach it."""
        self.live.discard(control)

    def interrupt(self, reason: str, signum: int | None = None) -> None:
        """Stop every run in flight, and every run that starts later, as ``RunControl.interrupt``."""
        self.stop = self.stop or (reason, signum)
        for control in list(self.live):
            control.interrupt(*self.stop)

    def abandon(self) -> None:
        """Abandon every run in flight, and every run that starts later, as ``RunControl.abandon``."""
        self.abandoned = True
        for control in list(self.live):
            control.abandon()
