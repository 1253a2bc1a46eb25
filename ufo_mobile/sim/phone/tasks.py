"""Android-like tasks: back stacks of frames, keyed by the package that started them.

The launcher's task always exists and can never be emptied. HOME brings it to the front; BACK pops
the current task and, at its root, drops the task and returns to the launcher (the next launch
starts the app afresh). Other tasks keep their stacks while in the background, so launching an app
again resumes where it was left, as on a phone.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Frame:
    """One entry of a back stack: a screen of an app and what the user did to it."""

    package: str
    screen: str
    scroll: dict[str, int] = field(default_factory=dict)
    focus: str | None = None
    select_all: bool = False
    keyboard_hidden: bool = False  # the IME hid itself (ADB_KEYBOARD_HIDE) until a field is tapped again

    @property
    def keyboard_up(self) -> bool:
        """A text field has focus and the input method has not hidden itself."""
        return self.focus is not None and not self.keyboard_hidden

    def focus_on(self, bind: str | None) -> None:
        self.focus, self.select_all, self.keyboard_hidden = bind, False, False


class Tasks:
    """The task list of a phone; not thread-safe on its own (the phone holds the lock)."""

    def __init__(self, launcher: Frame) -> None:
        self.launcher = launcher.package
        self._stacks: dict[str, list[Frame]] = {self.launcher: [launcher]}
        self.current = self.launcher
        self._recent: list[str] = [self.launcher]  # owners, most recently in front first

    def _front(self, owner: str) -> None:
        self.current = owner
        self._recent = [owner, *(other for other in self._recent if other != owner)]

    def tops(self) -> list[Frame]:
        """The top frame of every task, most recently in front first."""
        return [self._stacks[owner][-1] for owner in self._recent if owner in self._stacks]

    @property
    def top(self) -> Frame:
        """The frame on screen."""
        return self._stacks[self.current][-1]

    def has(self, owner: str) -> bool:
        return owner in self._stacks

    def home(self) -> None:
        self._front(self.launcher)

    def back(self) -> None:
        stack = self._stacks[self.current]
        if len(stack) > 1:
            stack.pop()
        else:
            self.drop(self.current)

    def push(self, frame: Frame, *, replace: bool = False) -> None:
        """Open ``frame`` on top of the current task (``replace`` swaps out the top first)."""
        stack = self._stacks[self.current]
        if replace and len(stack) > 1:
            stack.pop()
        stack.append(frame)

    def switch(self, owner: str, fresh: Frame | None = None) -> None:
        """Bring ``owner``'s task to the front; ``fresh`` starts it over from that frame."""
        if fresh is not None:
            self._stacks[owner] = [fresh]
        self._front(owner)

    def drop(self, owner: str) -> None:
        """Forget a task (never the launcher's); if it was in front, show the launcher."""
        if owner == self.launcher:
            return
        self._stacks.pop(owner, None)
        self._recent = [other for other in self._recent if other != owner]
        if self.current == owner:
            self._front(self.launcher)

    def drop_package(self, package: str) -> None:
        """Forget every task that shows a screen of ``package`` (force-stop, reinstall)."""
        for owner in [owner for owner, stack in self._stacks.items()
                      if any(frame.package == package for frame in stack)]:
            self.drop(owner)
