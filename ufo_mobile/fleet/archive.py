"""A run directory as bytes and back: how a Ray worker hands its run to the driver's log directory.

``pack`` makes a gzip'd tar of the directory (the run's lock and disk reserve left out);
``unpack`` extracts it safely (only regular files and folders, nothing outside the one top folder,
through the ``data`` filter) into a hidden folder next to its place, then renames it into place, so
a run directory never appears half-written. ``run.json``'s ``run_dir`` is set to where it landed.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

from ufo_mobile.core.trace.files import write_atomic
from ufo_mobile.core.trace.writer import dumps
from ufo_mobile.errors import RunWriteError

SKIP = {"run.lock", ".reserve"}
MAX_MEMBERS = 200_000


def pack(run_dir: Path) -> bytes:
    """``run_dir`` as a gzip'd tar (without its lock and symbolic links), to send back from a worker."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for path in sorted(run_dir.rglob("*")):
            if path.name in SKIP or path.is_symlink():
                continue
            tar.add(path, arcname=str(Path(run_dir.name) / path.relative_to(run_dir)), recursive=False)
    return buffer.getvalue()


def _free_name(parent: Path, name: str) -> Path:
    for n in range(1, 1000):
        candidate = parent / (name if n == 1 else f"{name}-{n}")
        if not candidate.exists():
            return candidate
    raise RunWriteError(f"cannot write {parent / name}: too many runs use this name", path=str(parent / name))


def unpack(data: bytes, log_dir: Path, name: str) -> Path:
    """Extract the archive of run ``name`` into ``log_dir``; returns the run directory (``name``, or
    ``name-2``... when taken).

    Raises:
        RunWriteError: the archive is not a run directory of that name, or cannot be written.
    """
    incoming = log_dir / f".incoming-{name}"
    try:
        shutil.rmtree(incoming, ignore_errors=True)
        incoming.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = tar.getmembers()
            if len(members) > MAX_MEMBERS:
                raise RunWriteError(f"the run archive of {name} has too many files", path=str(incoming))
            for member in members:
                top = Path(member.name).parts[0] if member.name else ""
                if top != name or not (member.isfile() or member.isdir()):
                    raise RunWriteError(f"the run archive of {name} holds {member.name!r}", path=str(incoming))
            tar.extractall(incoming, filter="data")
        target = _free_name(log_dir, name)
        (incoming / name).rename(target)
    except (OSError, tarfile.TarError) as exc:
        raise RunWriteError(f"cannot unpack the run {name} into {log_dir}: {exc}", path=str(log_dir)) from exc
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
    _point_run_json(target)
    return target


def _point_run_json(run_dir: Path) -> None:
    """``run.json`` names the directory the run was written in (a worker's temporary one): say where it is."""
    path = run_dir / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(data, dict) and "run_dir" in data:
        data["run_dir"] = str(run_dir)
        write_atomic(path, dumps(data).encode("utf-8"))
