"""What /proc says about a process: running, a zombie, or gone; and who is left in a process group or
session (the sandbox tests, and the fault tests that check a command leaves nothing running)."""

from __future__ import annotations

from pathlib import Path


def process_state(pid: int) -> str | None:
    """The state letter of ``pid`` (``R``, ``S``, ``Z``, ...), or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def alive(pid: int) -> bool:
    """A zombie is dead: it runs nothing and only waits for its (new) parent to reap it."""
    return process_state(pid) not in (None, "Z", "X")


def _live(field: int, value: int) -> list[int]:
    """Running processes (not zombies) whose ``/proc/<pid>/stat`` field ``field`` (counted after
    the name: 0 state, 1 parent, 2 process group, 3 session) is ``value``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[field]) == value and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def live_group_members(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that are still running."""
    return _live(2, pgid)


def session_processes(sid: int) -> list[int]:
    """The processes of session ``sid`` that are still running."""
    return _live(3, sid)
