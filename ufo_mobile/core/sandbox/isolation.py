"""Namespaces around model-written code, through bubblewrap (``bwrap``, Debian's ``bubblewrap``).

With ``namespaces`` the sandbox child runs in new user, PID, mount, IPC, UTS and cgroup namespaces,
and a network namespace of its own unless the settings allow the network:

- it sees only its own processes: not the runtime's (no ``/proc/<ppid>/environ`` or ``mem``, no
  signal can reach it), and every process it starts dies with it (the namespace's first process is
  killed with the runtime's child, and the kernel kills the rest of a PID namespace with it), so a
  ``setsid()`` or a double fork leaves nothing behind;
- its file system is a fresh one holding, read-only, the system's programs and libraries (``/usr``,
  the ``/lib*`` and ``/bin`` folders), a few harmless files of ``/etc`` (name resolution, TLS
  certificates, time zone), the Python installation (and, for scripts, the environment whose packages
  they may import), and, writable, only its own empty working directory and ``/tmp``: no home folder,
  no run directory, no secrets file;
- it runs as ``nobody`` inside, with no capabilities, and cannot create further user namespaces;
- the number of its processes is bounded (``RLIMIT_NPROC`` counted in its own user namespace, so the
  whole tree, not each process), besides each process's memory, CPU time and file size.

Where the runtime may make a control group of its own (``cgroup.py``), the whole tree's memory and
number of processes are bounded there too, in either mode; where it may not, memory is bounded per
process (``RLIMIT_AS``), so the tree may use up to ``max_processes x memory_mb``.

``process`` is the weaker mode of earlier versions: a child process with an empty environment and
the same per-process limits, but the machine's whole file system and process table in view. The
Scripter runs in it only when the settings name it; CodeAct falls back to it where namespaces are
not available (its code is also held to a subset of Python without imports, files or attributes).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Isolation = Literal["namespaces", "process"]

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The system's programs and libraries, read-only (a merged-/usr link stays a link)."""
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/resolv.conf",
             "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf", "/etc/protocols",
             "/etc/services", "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/mime.types",
             "/etc/alternatives")
"""What of ``/etc`` a Python program may need (libraries, name resolution, TLS), nothing else."""
NOBODY = 65534
PROBE_SECONDS = 20.0


@dataclass(frozen=True)
class Confinement:
    """How one sandbox child is confined: ``isolation``, and with namespaces whether it has the network."""

    isolation: Isolation = "namespaces"
    network: bool = False


ISOLATED = Confinement()
"""Namespaces, no network: the default."""


def bwrap() -> str | None:
    return shutil.which("bwrap")


def _python_dirs(site: bool) -> list[str]:
    """The Python installation (and, for ``site``, the environment of installed packages), outside /usr."""
    found = {sys.base_prefix, sys.base_exec_prefix, str(Path(sys.executable).resolve().parent.parent)}
    if site:
        found |= {sys.prefix, sys.exec_prefix}
    return sorted(d for d in found if d and Path(d).is_dir() and not any(
        d == s or d.startswith(s + "/") for s in SYSTEM_DIRS))


def bwrap_args(workdir: str, *, network: bool, site: bool) -> list[str]:
    """The ``bwrap`` command line (before the program) for a child working in ``workdir``."""
    args = ["--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--uid", str(NOBODY), "--gid", str(NOBODY), "--hostname", "sandbox", "--disable-userns"]
    if network:
        args.append("--share-net")
    # the mounts over whole folders first: what is bound below them afterwards (a Python installation or
    # the working directory under /tmp) stays visible
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in ETC_FILES:
        args += ["--ro-bind-try", path, path]
    for path in _python_dirs(site):
        args += ["--ro-bind", path, path]
    return [*args, "--bind", workdir, workdir, "--chdir", workdir, "--unsetenv", "PWD"]


@functools.cache
def namespace_problem() -> str | None:
    """Why model-written code cannot be put in namespaces on this machine, or None when it can (a
    probe, once per process: the sandbox's own command line runs the interpreter)."""
    path = bwrap()
    if path is None:
        return "bubblewrap is not installed (the bwrap command; Debian and Ubuntu: apt-get install bubblewrap)"
    probe = Path(os.environ.get("TMPDIR") or "/tmp")
    try:
        python = os.path.realpath(sys.executable)
        done = subprocess.run([path, *bwrap_args(str(probe), network=False, site=False), python, "-I", "-S", "-c",
                               "pass"], capture_output=True, timeout=PROBE_SECONDS, check=False,
                              env={"PATH": os.defpath})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap did not run: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap cannot create namespaces here: {said[-1] if said else f'exit {done.returncode}'}"
    return None


def command(program: list[str], workdir: str, confinement: Confinement, *, site: bool) -> list[str]:
    """``program`` as the sandbox starts it: inside namespaces, or as it is (``process``).

    Raises:
        SandboxError: namespaces are asked for and this machine cannot make them (the reason).
    """
    if confinement.isolation == "process":
        return program
    from ufo_mobile.core.sandbox.errors import SandboxError

    problem = namespace_problem()
    if problem is not None:
        raise SandboxError(f"{problem}; model-written code runs only isolated, unless the settings choose "
                           "isolation: process (no namespaces: the code sees the machine's files and processes)")
    path = bwrap()
    assert path is not None
    return [path, *bwrap_args(workdir, network=confinement.network, site=site), "--", *program]
