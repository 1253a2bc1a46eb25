"""Running the CLI on a small or read-only file system, in a private mount namespace.

``unshare -rm`` gives an unprivileged user a mount namespace of its own (root gets one with
``unshare -m``), where a size-limited tmpfs can be mounted without touching the machine's mounts.
The mount disappears with the namespace, so the command's output directory is copied out first.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.faults.conftest import HANG_GUARD, ROOT


@functools.cache
def _unshare_flags() -> list[str] | None:
    if shutil.which("unshare") is None:
        return None
    for flags in (["-rm"], ["-m"]):
        try:
            probe = subprocess.run(["unshare", *flags, "sh", "-c", "mount -t tmpfs -o size=16k tmpfs /mnt"],
                                   capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return flags
    return None


def namespace_mounts() -> bool:
    """True when this machine lets us mount a tmpfs in a private namespace."""
    return _unshare_flags() is not None


def run_in_mount_namespace(mount: str, args: list[str], *, cwd: Path, copy_out: tuple[Path, Path] | None = None,
                           ) -> tuple[int, str, str]:
    """Run ``mount`` then ``python -m ufo_mobile ARGS`` in a new mount namespace; copy ``copy_out[0]``
    to ``copy_out[1]`` before the namespace (and its mounts) goes away. Returns (code, stdout, stderr)."""
    flags = _unshare_flags()
    assert flags is not None, "check namespace_mounts() first"
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "ufo_mobile", *args])
    script = f"{mount} || exit 97\n{command}\nrc=$?\n"
    if copy_out is not None:
        script += f"cp -a {shlex.quote(str(copy_out[0]))}/. {shlex.quote(str(copy_out[1]))}/ || exit 98\n"
    script += "exit $rc\n"
    proc = subprocess.run(["unshare", *flags, "sh", "-c", script], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=HANG_GUARD, check=False)
    assert proc.returncode not in (97, 98), proc.stderr
    return proc.returncode, proc.stdout, proc.stderr
