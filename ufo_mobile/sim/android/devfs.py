"""The emulated device's file system: a thread-safe in-memory tree of directories and files.

Paths are POSIX, resolved against ``/``; ``/sdcard`` is an alias of ``/storage/emulated/0`` as on
a phone. Holds what ``adb push`` and ``sync`` send, ``uiautomator dump`` and ``screencap`` write.
A resolver (``set_resolver``) can supply files on first access (installed APKs, made lazily): a
path it knows appears when it is stat'ed or read, and stays.
"""

from __future__ import annotations

import posixpath
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass

ALIASES = {"/sdcard": "/storage/emulated/0", "/storage/self/primary": "/storage/emulated/0"}
DEFAULT_DIRS = ("/data/local/tmp", "/storage/emulated/0/Download", "/storage/emulated/0/Pictures",
                "/storage/emulated/0/DCIM", "/system/bin", "/dev", "/proc")


class FsError(Exception):
    """A file-system call failed; ``reason`` reads like strerror (``No such file or directory``)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


@dataclass(slots=True)
class Node:
    mode: int
    mtime: int
    data: bytes = b""

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def size(self) -> int:
        return 4096 if self.is_dir else len(self.data)


Resolver = Callable[[str], bytes | None]


class DeviceFs:
    """An in-memory file tree; ``clock`` gives the mtime (seconds) of what the device writes."""

    def __init__(self, clock: Callable[[], int], *, max_file_size: int = 64 * 1024 * 1024) -> None:
        self._clock = clock
        self._max_file_size = max_file_size
        self._resolver: Resolver | None = None
        self._lock = threading.Lock()
        self._nodes: dict[str, Node] = {"/": Node(stat.S_IFDIR | 0o755, clock())}
        for path in DEFAULT_DIRS:
            self.mkdir(path, parents=True)

    @staticmethod
    def normalize(path: str) -> str:
        full = posixpath.normpath(posixpath.join("/", path))
        full = "/" + full.lstrip("/")
        for alias, target in ALIASES.items():
            if full == alias or full.startswith(alias + "/"):
                return target + full[len(alias):]
        return full

    def set_resolver(self, resolver: Resolver | None) -> None:
        """``resolver(full_path)`` gives the bytes of a file made on first access, or None."""
        self._resolver = resolver

    def _lookup(self, full: str) -> Node | None:
        """The node at a normalized path, made by the resolver if it knows the path (called
        without the lock held: making a file may be slow)."""
        with self._lock:
            node = self._nodes.get(full)
        resolver = self._resolver
        if node is not None or resolver is None:
            return node
        data = resolver(full)
        if data is None:
            return None
        with self._lock:
            node = self._nodes.get(full)
            if node is None:
                self._mkdirs(posixpath.dirname(full))
                node = self._nodes[full] = Node(stat.S_IFREG | 0o644, self._clock(), data)
            return node

    def stat(self, path: str) -> Node | None:
        node = self._lookup(self.normalize(path))
        return None if node is None else Node(node.mode, node.mtime, b"" if node.is_dir else node.data)

    def exists(self, path: str) -> bool:
        return self.stat(path) is not None

    def read(self, path: str) -> bytes:
        node = self._lookup(self.normalize(path))
        if node is None:
            raise FsError(path, "No such file or directory")
        if node.is_dir:
            raise FsError(path, "Is a directory")
        return node.data

    def write(self, path: str, data: bytes, *, mode: int = 0o644, mtime: int | None = None,
              append: bool = False, make_parents: bool = False) -> None:
        full = self.normalize(path)
        with self._lock:
            parent = posixpath.dirname(full)
            if make_parents:
                self._mkdirs(parent)
            if parent not in self._nodes or not self._nodes[parent].is_dir:
                raise FsError(path, "No such file or directory")
            old = self._nodes.get(full)
            if old is not None and old.is_dir:
                raise FsError(path, "Is a directory")
            content = (old.data if append and old is not None else b"") + data
            if len(content) > self._max_file_size:
                raise FsError(path, "File too large")
            perm = stat.S_IMODE(mode) or 0o644
            self._nodes[full] = Node(stat.S_IFREG | perm, self._clock() if mtime is None else mtime, content)

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        full = self.normalize(path)
        with self._lock:
            if parents:
                self._mkdirs(full)
                return
            if full in self._nodes:
                raise FsError(path, "File exists")
            parent = self._nodes.get(posixpath.dirname(full))
            if parent is None or not parent.is_dir:
                raise FsError(path, "No such file or directory")
            self._nodes[full] = Node(stat.S_IFDIR | 0o771, self._clock())

    def _mkdirs(self, full: str) -> None:
        parts = [part for part in full.split("/") if part]
        current = ""
        for part in parts:
            current += "/" + part
            node = self._nodes.get(current)
            if node is None:
                self._nodes[current] = Node(stat.S_IFDIR | 0o771, self._clock())
            elif not node.is_dir:
                raise FsError(current, "Not a directory")

    def remove(self, path: str, *, recursive: bool = False) -> None:
        full = self.normalize(path)
        with self._lock:
            node = self._nodes.get(full)
            if node is None:
                raise FsError(path, "No such file or directory")
            if full == "/":
                raise FsError(path, "Device or resource busy")
            if node.is_dir and not recursive:
                raise FsError(path, "Is a directory")
            for key in [key for key in self._nodes if key == full or key.startswith(full + "/")]:
                del self._nodes[key]

    def listdir(self, path: str) -> list[tuple[str, Node]]:
        """(name, node) of the entries of a directory, sorted by name."""
        full = self.normalize(path)
        with self._lock:
            node = self._nodes.get(full)
            if node is None:
                raise FsError(path, "No such file or directory")
            if not node.is_dir:
                raise FsError(path, "Not a directory")
            prefix = full.rstrip("/") + "/"
            entries = [(key[len(prefix):], child) for key, child in self._nodes.items()
                       if key.startswith(prefix) and "/" not in key[len(prefix):] and key != full]
            return sorted(entries)
