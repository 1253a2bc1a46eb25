"""A process-wide bound on how many screens hold their full-size pixels at the same time.

A decoded phone screen is about 10 MB of pixels (1080x2400 RGB: Pillow keeps 4 bytes a pixel), and
the pictures made from it hold a few MB more while they are made. A batch runs many phones in one
process: when every run made its pictures at the same moment, a 16-phone batch peaked at about 2.5x
one run's memory (``bench/memory.py``). ``ScreenImages`` (``ui/screen_images.py``) asks here before
it decodes a screenshot, and says when it has let the pixels go.

There are two kinds of holders: at most ``limit`` working (by default the number of CPUs, at least
2: more pictures at once would not be made any faster) and at most ``kept_limit`` kept (by default
as many):

- working: a thread decoding, drawing and encoding one screen's pictures (``enter`` ... ``leave``).
  The next one waits until one of them is done. A working holder only computes: it always finishes,
  so the wait always ends; still, a wait longer than ``WAIT_SECONDS`` gives up and goes on without
  a slot (counted in ``overdrawn``) rather than hold a step up for good. A step cancelled while
  its thread waits (its step timeout) leaks nothing: the thread still gets its turn, finishes and
  gives the slot back (``ScreenImages.working`` gives it back in ``finally``).
- kept: pixels decoded outside the picture-making (the observation phase's black-screen check) and
  kept for the pictures made a moment later (``keep`` ... ``unkeep``). Keeping never waits (a run
  that keeps pixels may itself be waiting for a thread to make its pictures in): past
  ``kept_limit`` kept screens, ``keep`` says no and the pixels are let go (the pictures decode
  again). Only screenshots small enough for the black check (``screenshot.BLANK_MAX_BYTES``) are
  decoded that early: the simulated phone's flat screens, a few real ones. In a 16-phone batch of
  simulated phones whose steps all start together (``bench/memory.py``), 22-27 of 64 such screens
  were decoded a second time (about 9 ms of CPU each); keeping 8 spared that at about 50 MB more
  peak (one run of each).

A child process forked while the parent's threads held slots starts with every slot free
(``forget_holders``, registered with ``os.register_at_fork``).
"""

from __future__ import annotations

import os
import threading

WAIT_SECONDS = 10.0  # far past what one screen's pictures take (tens of ms); a safety net, not a pace


def default_limit() -> int:
    """Screens that may hold full-size pixels at once in this process: one per CPU, at least 2."""
    return max(2, os.cpu_count() or 1)


class PixelSlots:
    """The counts of working and kept holders (module docstring). Thread-safe."""

    def __init__(self, limit: int | None = None, *, kept_limit: int | None = None,
                 wait_seconds: float = WAIT_SECONDS) -> None:
        self.limit = max(1, limit if limit is not None else default_limit())
        self.kept_limit = max(0, kept_limit if kept_limit is not None else self.limit)
        self.wait_seconds = wait_seconds
        self._condition = threading.Condition()
        self.working = 0  # working holders now
        self.kept = 0  # kept holders now
        self.overdrawn = 0  # working holders that went on without a slot after waiting wait_seconds
        self.most_working = 0  # the most working holders seen at once (the bound, as it was kept)

    def enter(self) -> None:
        """Become a working holder: wait (at most ``wait_seconds``) until fewer than ``limit`` are.
        Every ``enter`` is followed by one ``leave``, whatever happens in between."""
        with self._condition:
            if not self._condition.wait_for(lambda: self.working < self.limit, self.wait_seconds):
                self.overdrawn += 1
            self.working += 1
            self.most_working = max(self.most_working, self.working)

    def leave(self) -> None:
        """A working holder is done (its pixels are let go, or kept with ``keep``)."""
        with self._condition:
            self.working = max(0, self.working - 1)
            self._condition.notify()

    def keep(self) -> bool:
        """Whether one more screen may keep its pixels between two pieces of work (never waits)."""
        with self._condition:
            if self.kept >= self.kept_limit:
                return False
            self.kept += 1
            return True

    def unkeep(self) -> None:
        """Kept pixels are let go (or become a working holder's again)."""
        with self._condition:
            self.kept = max(0, self.kept - 1)

    def forget_holders(self) -> None:
        """Start again from no holders: in a child process just forked, whose only thread is the one
        that forked, a slot the parent's other threads held would never be given back."""
        self._condition = threading.Condition()
        self.working = self.kept = 0


SLOTS = PixelSlots()  # the process's bound, shared by every ScreenImages unless one is given its own
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=SLOTS.forget_holders)
