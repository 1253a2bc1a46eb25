"""App labels: what the package manager's shell output says, and a disk cache of labels read from APKs.

Android has no shell command that prints an app's label (it lives in the APK, see ``ufo_mobile.apk``);
these helpers read what the shell does print, robustly across versions:

- ``launcher_packages``: ``cmd package query-activities --brief -a MAIN -c LAUNCHER`` (``N activities
  found:``, then per ``Activity #i:`` a ResolveInfo line and ``pkg/.Activity``), the ``--components``
  form (one ``pkg/.Activity`` a line) and the full ResolveInfo dump (``packageName=``).
- ``package_listing``: ``pm list packages -f --show-versioncode``: ``package:PATH=PKG versionCode:N``
  (the path itself may hold ``=``, as in ``/data/app/~~Xy==/pkg-Zw==/base.apk``).

``LabelCache`` keeps labels on disk per device, keyed by package and version code, so that a
second run reads no APK; ``None`` as the directory keeps them in memory only.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

_COMPONENT = re.compile(r"^\s*([A-Za-z][\w]*(?:\.[\w]+)+)/[\w.$]+\s*$")
_PACKAGE_NAME = re.compile(r"^\s*packageName=([A-Za-z][\w]*(?:\.[\w]+)+)\s*$")
_LISTING = re.compile(r"^package:(?:(?P<path>.+)=)?(?P<name>[A-Za-z][\w]*(?:\.[\w]+)*)"
                      r"(?:\s+versionCode:(?P<version>-?\d+))?(?:\s+.*)?$")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]+")
MAX_LABEL = 100
CACHE_FORMAT = 1


def launcher_packages(output: str) -> list[str]:
    """The packages of ``query-activities`` output, in order, each once."""
    found: dict[str, None] = {}
    for line in output.splitlines():
        match = _COMPONENT.match(line) or _PACKAGE_NAME.match(line)
        if match is not None:
            found.setdefault(match.group(1))
    return list(found)


def query_failed(output: str) -> bool:
    """Whether ``cmd package query-activities`` is missing or refused its options (old Android)."""
    lowered = output.lower()
    return any(marker in lowered for marker in ("unknown option", "unknown command", "can't find service",
                                                "not found", "error:", "exception"))


@dataclass(frozen=True)
class Listed:
    """A line of ``pm list packages``: the package, its APK path and version code when printed."""

    name: str
    path: str | None = None
    version: int | None = None


def package_listing(output: str) -> dict[str, Listed]:
    """``pm list packages [-f] [--show-versioncode]`` output by package name."""
    found: dict[str, Listed] = {}
    for line in output.splitlines():
        match = _LISTING.match(line.strip())
        if match is None:
            continue
        version = match.group("version")
        found[match.group("name")] = Listed(match.group("name"), match.group("path"),
                                            int(version) if version is not None else None)
    return found


def clean_label(label: str, package: str) -> str:
    """A label fit for a list of apps: one line, no control characters, bounded; the package when empty."""
    text = " ".join(_UNSAFE.sub(" ", label).split())[:MAX_LABEL]
    return text or package


def cache_key(serial: str) -> str:
    """A file name for a device (its serial number), safe on every file system."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", serial)[:100] or "device"


class LabelCache:
    """Labels by package and version code for one device, in ``directory/<device>.json``."""

    def __init__(self, directory: Path | None, device: str) -> None:
        self._path = directory / f"{cache_key(device)}.json" if directory is not None else None
        self._entries: dict[str, tuple[int, str]] = {}
        self._loaded = False

    @property
    def path(self) -> Path | None:
        """The cache file; None when labels are kept in memory only."""
        return self._path

    def get(self, package: str, version: int | None) -> str | None:
        """The label kept for this version of ``package``; None when there is none (or another version's)."""
        self._load()
        entry = self._entries.get(package)
        return entry[1] if entry is not None and version is not None and entry[0] == version else None

    def put(self, package: str, version: int | None, label: str) -> None:
        """Keep ``label`` for this version of ``package`` (``save`` writes the file); a package
        without a version is not kept."""
        self._load()
        if version is not None:
            self._entries[package] = (version, label)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self._path is None:
            return
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # no cache yet, or an unreadable one: labels are read again
        entries = data.get("labels") if isinstance(data, dict) and data.get("format") == CACHE_FORMAT else None
        for package, value in (entries or {}).items():
            if isinstance(value, list) and len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], str):
                self._entries[str(package)] = (value[0], value[1])

    def save(self) -> None:
        """Write the cache (atomically); raises ``OSError`` when the directory cannot be written."""
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"format": CACHE_FORMAT, "labels": {k: list(v) for k, v in sorted(self._entries.items())}}
        fd, tmp = tempfile.mkstemp(prefix=".labels-", suffix=".json", dir=self._path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(payload, file, ensure_ascii=False, indent=0)
            os.replace(tmp, self._path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
