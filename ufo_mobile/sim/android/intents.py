"""Intents as ``am`` and ``cmd package`` parse them from the command line, and print them.

``describe`` follows ``Intent.toShortString``: ``act``, ``cat``, ``dat``, ``flg``, ``pkg``, ``cmp``,
then ``(has extras)``. ``am broadcast`` adds FLAG_RECEIVER_FROM_SHELL (0x400000) on Android 8+
(ActivityManagerShellCommand.runSendBroadcast), so a real phone prints ``flg=0x400000`` there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FLAG_RECEIVER_FROM_SHELL = 0x400000
_EXTRA_ARITY = {"--es": 2, "--esn": 1, "--ei": 2, "--el": 2, "--ef": 2, "--ez": 2, "--eu": 2, "--ecn": 2,
                "--eia": 2, "--ela": 2, "--efa": 2, "--esa": 2, "--user": 1, "-f": 1, "-t": 1, "-d": 1,
                "-a": 1, "-c": 1, "-n": 1, "-p": 1, "--receiver-permission": 1, "-S": 0, "-W": 0, "-R": 1,
                "--activity-clear-task": 0, "--activity-new-task": 0, "--activity-clear-top": 0,
                "--activity-single-top": 0, "--windowingMode": 1, "--display": 1, "-e": 2,
                "--include-stopped-packages": 0}


class IntentError(Exception):
    pass


@dataclass
class Intent:
    action: str | None = None
    categories: list[str] = field(default_factory=list)
    component: str | None = None
    package: str | None = None
    data: str | None = None
    extras: dict[str, str] = field(default_factory=dict)
    wait: bool = False
    flags: int = 0

    def describe(self) -> str:
        parts = [f"act={self.action}"] if self.action else []
        if self.categories:
            parts.append("cat=[" + ",".join(self.categories) + "]")
        if self.data:
            parts.append(f"dat={self.data}")
        if self.flags:
            parts.append(f"flg=0x{self.flags:x}")
        if self.package:
            parts.append(f"pkg={self.package}")
        if self.component:
            parts.append(f"cmp={self.component}")
        if self.extras:
            parts.append("(has extras)")
        return "Intent { " + " ".join(parts) + " }"


def parse_intent(args: list[str], options: dict[str, int] | None = None) -> Intent:
    """An intent from ``am``-style arguments; ``options`` adds command options to skip (name: arity)."""
    arity_of = {**_EXTRA_ARITY, **(options or {})}
    intent = Intent()
    rest = list(args)
    while rest:
        option = rest.pop(0)
        if not option.startswith("-"):
            if "/" in option:
                intent.component = option
            else:
                intent.package = option
            continue
        arity = arity_of.get(option)
        if arity is None:
            raise IntentError(f"Unknown option: {option}")
        if len(rest) < arity:
            raise IntentError(f"Argument expected after \"{option}\"")
        values, rest = rest[:arity], rest[arity:]
        _apply(intent, option, values)
    return intent


def _apply(intent: Intent, option: str, values: list[str]) -> None:
    if option == "-a":
        intent.action = values[0]
    elif option == "-c":
        intent.categories.append(values[0])
    elif option == "-n":
        intent.component = values[0]
    elif option == "-p":
        intent.package = values[0]
    elif option == "-d":
        intent.data = values[0]
    elif option == "-W":
        intent.wait = True
    elif len(values) == 2:
        intent.extras[values[0]] = values[1]


def split_component(component: str) -> tuple[str, str]:
    package, _, activity = component.partition("/")
    return package, activity


def short_activity(package: str, activity: str) -> str:
    """``ComponentName.flattenToShortString``'s class part: ``.Rel`` inside the package."""
    return activity[len(package):] if activity.startswith(package + ".") else activity


def without_user(args: list[str]) -> list[str]:
    """``args`` without a ``--user N`` option."""
    rest = list(args)
    if "--user" in rest[:-1]:
        at = rest.index("--user")
        del rest[at:at + 2]
    return rest
