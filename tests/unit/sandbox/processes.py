"""What /proc says about a process: running, a zombie, or gone; and who is left in a process group."""

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


def live_group_members(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that are still running."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members
