"""An installed app's real label, read from its APK a few byte ranges at a time.

``pm list packages`` prints package names only; the label lives in the APK, as
``<application android:label>`` in the binary manifest (literal text, or a string resource resolved
through ``resources.arsc``). APKs run to hundreds of MB, so nothing here reads a whole one: the reader
takes ``read_range(offset, length) -> bytes`` and asks for the zip's tail, its central directory, the
manifest and (for a resource label) the resource table, each bounded by a limit::

    size = int(shell(f"stat -c %s {quote(path)}"))       # on the phone: the APK from `pm path PKG`
    info = app_label(dd_reader(exec_out, path), size)      # 3 or 4 dd calls, a few hundred KB at most

On a phone each range is one ``dd`` (toybox ``dd if= bs= skip= count=``), run through ``exec-out`` so
the bytes are not mangled by a terminal; every entry's CRC is checked, so mangled bytes are an error,
never a wrong label. Everything is synchronous: a driver runs ``app_label`` in its bounded executor.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ufo_mobile.apk.arsc import resolve_string
from ufo_mobile.apk.axml import ManifestInfo, parse_manifest
from ufo_mobile.apk.zip import CentralDirectory, ReadRange, ZipEntry, read_central_directory, read_entry
from ufo_mobile.errors import ApkError

__all__ = [
    "ARSC_LIMIT", "MANIFEST", "MANIFEST_LIMIT", "RESOURCES", "AppLabel", "CentralDirectory", "ManifestInfo",
    "ReadRange", "ZipEntry", "app_label", "dd_command", "dd_reader", "file_reader", "parse_manifest",
    "read_central_directory", "read_entry", "resolve_string",
]

MANIFEST, RESOURCES = "AndroidManifest.xml", "resources.arsc"
MANIFEST_LIMIT = 4 * 1024 * 1024
ARSC_LIMIT = 32 * 1024 * 1024


@dataclass(frozen=True)
class AppLabel:
    """An app's package, the label a launcher shows for it, and its version code (0 when absent)."""

    package: str
    label: str
    version_code: int


def app_label(read_range: ReadRange, size: int, *, prefer_locale: str = "en") -> AppLabel:
    """Read the label of the APK of ``size`` bytes behind ``read_range``.

    A resource label is taken from the default configuration, else the ``prefer_locale`` one, else
    any. An app without a label gets its package name, as Android shows it. Raises ``ApkError``.
    """
    directory = read_central_directory(read_range, size)
    manifest = parse_manifest(read_entry(read_range, directory, MANIFEST, limit=MANIFEST_LIMIT))
    label = manifest.label_text
    if manifest.label_ref is not None:
        if RESOURCES not in directory.entries:
            raise ApkError(f"the label is resource {manifest.label_ref:#010x} but {RESOURCES} is missing")
        arsc = read_entry(read_range, directory, RESOURCES, limit=ARSC_LIMIT)
        label = resolve_string(arsc, manifest.label_ref, prefer_locale)
    if not label or not label.strip():
        label = manifest.package
    return AppLabel(manifest.package, label, manifest.version_code or 0)


def dd_command(path: str, offset: int, length: int, *, block: int = 4096) -> tuple[str, int]:
    """A ``dd`` command reading whole ``block``-sized blocks around the range, and how many leading
    bytes of its output to drop. Whole blocks keep ``dd`` fast (``bs=1`` is a syscall a byte); the
    extra read is under two blocks. Messages go to /dev/null so a merged stderr cannot add bytes."""
    if offset < 0 or length < 0 or block <= 0:
        raise ValueError(f"bad range: offset={offset} length={length} block={block}")
    first = offset // block
    count = -(-(offset + length) // block) - first
    return f"dd if={shlex.quote(path)} bs={block} skip={first} count={count} 2>/dev/null", offset - first * block


def dd_reader(run: Callable[[str], bytes], path: str, *, block: int = 4096) -> ReadRange:
    """A ``read_range`` over a device file: ``run(command)`` runs a shell command there and returns its
    standard output as bytes (blocking; ``exec-out`` on adb)."""

    def read_range(offset: int, length: int) -> bytes:
        command, skip = dd_command(path, offset, length, block=block)
        return bytes(run(command))[skip:skip + length]

    return read_range


def file_reader(path: str | Path) -> ReadRange:
    """A ``read_range`` over a local file (tests, tools, APKs pulled earlier)."""

    def read_range(offset: int, length: int) -> bytes:
        with open(path, "rb") as file:
            file.seek(offset)
            return file.read(length)

    return read_range
