"""Bounds for a sandbox child's whole tree of processes, through a control group of its own.

Where the runtime may make a control group below its own (cgroup v2 with the memory and pids
controllers delegated to it, or cgroup v1's memory and pids hierarchies, as a container's root
often may), each sandbox child joins a fresh group before it starts the code: the memory of all its
processes together is bounded by ``memory.max`` (v1: ``memory.limit_in_bytes``), their number by
``pids.max``; past the memory bound the kernel kills a process of the group (the run reads "killed
by SIGKILL (out of memory?)"). The group is removed when the child is gone. Where no group can be
made, ``TreeGroup.make`` answers None and the per-process limits (``RLIMIT_AS``, ``RLIMIT_NPROC`` in
namespaces) are what holds: ``isolation.py`` says what that guarantees.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count(1)


def _own_groups(root: Path) -> dict[str, Path]:
    """The runtime's own group in each hierarchy that has a controller it needs (v2: "unified")."""
    found: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        relative = path.lstrip("/")
        if number == "0" and not controllers and (root / "cgroup.controllers").exists():
            found["unified"] = root / relative
        for name in ("memory", "pids"):
            if name in controllers.split(","):
                found[name] = root / name / relative
    return found


@dataclass
class TreeGroup:
    """The control group(s) one sandbox child and all its processes live in."""

    paths: list[Path]

    @classmethod
    def make(cls, memory_bytes: int, processes: int, *, root: Path = ROOT) -> TreeGroup | None:
        """A fresh group bounding memory and processes, or None where none can be made here."""
        name = f"ufo-sandbox-{os.getpid()}-{next(_counter)}"
        own = _own_groups(root)
        made: list[Path] = []
        try:
            if "unified" in own:
                group = own["unified"] / name
                group.mkdir()
                made.append(group)
                (group / "memory.max").write_text(str(memory_bytes))
                (group / "pids.max").write_text(str(processes))
                with contextlib.suppress(OSError):
                    (group / "memory.swap.max").write_text("0")
            elif "memory" in own and "pids" in own:
                for controller, limit_file, value in (("memory", "memory.limit_in_bytes", memory_bytes),
                                                      ("pids", "pids.max", processes)):
                    group = own[controller] / name
                    group.mkdir()
                    made.append(group)
                    (group / limit_file).write_text(str(value))
            else:
                return None
        except OSError:
            cls(made).remove()
            return None
        return cls(made)

    def joiner(self) -> Callable[[], None]:
        """What the child runs between fork and exec: it moves itself into the group(s), so everything
        it starts is in them from the first instruction of the code on."""
        files = [str(p / "cgroup.procs") for p in self.paths]

        def join() -> None:
            for file in files:
                with open(file, "w") as f:  # noqa: PTH123 - between fork and exec: the fewest moving parts
                    f.write(str(os.getpid()))

        return join

    def remove(self) -> None:
        """Remove the group(s); what the kernel still holds (a process not yet reaped) is left, named."""
        for path in self.paths:
            with contextlib.suppress(OSError):
                path.rmdir()
