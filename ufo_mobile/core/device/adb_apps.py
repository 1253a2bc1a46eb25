"""The adb driver's apps: the launchable ones, with the labels their APKs give them.

``get_apps`` lists what a launcher shows (``cmd package query-activities`` for MAIN/LAUNCHER; all of
``pm list packages`` where that command is missing) and names each app by the label in its APK
(``ufo_mobile.apk``: a few ``dd`` reads of the zip directory, the binary manifest and the resource
table, never the whole file), run in the bounded executor, a few at a time. ``pm list packages -f
--show-versioncode`` gives every APK's path and version in one call, ``stat`` every size in
another. Labels are cached on disk per device and version code (``device.label_cache_dir``), so a
second run reads no APK; an app whose APK cannot be read is named by ``label_for`` (logged).
"""

from __future__ import annotations

import asyncio
import shlex
import uuid

from ufo_mobile.apk import app_label, dd_reader
from ufo_mobile.core.device.adb_base import AdbBase
from ufo_mobile.core.device.base import AppInfo
from ufo_mobile.core.device.labels import (
    LabelCache,
    Listed,
    clean_label,
    launcher_packages,
    package_listing,
    query_failed,
)
from ufo_mobile.errors import DeviceCommandError, DeviceError

LAUNCHER_QUERY = ("cmd package query-activities --brief -a android.intent.action.MAIN "
                  "-c android.intent.category.LAUNCHER")
PARALLEL_READS = 4
STAT_BATCH = 50  # APK paths per ``stat`` call (a command line stays short)

# Labels of common system apps, the last resort when an APK cannot be read: stock Android has no
# shell command that prints an app's label.
KNOWN_LABELS = {
    "com.android.settings": "Settings", "com.android.chrome": "Chrome", "com.android.vending": "Play Store",
    "com.google.android.apps.messaging": "Messages", "com.android.contacts": "Contacts",
    "com.google.android.contacts": "Contacts", "com.google.android.dialer": "Phone",
    "com.android.dialer": "Phone", "com.google.android.gm": "Gmail", "com.google.android.youtube": "YouTube",
    "com.google.android.apps.maps": "Maps", "com.google.android.calendar": "Calendar",
    "com.android.camera2": "Camera", "com.google.android.GoogleCamera": "Camera",
    "com.google.android.apps.photos": "Photos", "com.google.android.deskclock": "Clock",
    "com.android.deskclock": "Clock", "com.google.android.calculator": "Calculator",
    "com.android.calculator2": "Calculator", "com.google.android.apps.docs": "Drive",
    "com.whatsapp": "WhatsApp", "org.telegram.messenger": "Telegram", "com.android.launcher3": "Launcher",
    "com.example.notes": "Notes",
}


def label_for(package: str) -> str:
    """A guess from the package name (the last resort: see ``AdbDriver.get_apps``)."""
    if package in KNOWN_LABELS:
        return KNOWN_LABELS[package]
    tail = package.rsplit(".", 1)[-1]
    return tail[:1].upper() + tail[1:]


class AdbAppsMixin(AdbBase):
    """``AdbDriver``'s apps: installing, the installed packages, and the launchable apps with their labels."""

    async def install_app(self, apk_path: str) -> None:
        """Push the APK and ``pm install -r -t`` it (what ``adb install`` does without streaming)."""
        remote = f"/data/local/tmp/ufo-install-{uuid.uuid4().hex}.apk"
        limit = max(self._timeout, 120.0)
        await self._call(self.device.sync.push, apk_path, remote, what="push apk", limit=limit)
        try:
            out = await self._shell(f"pm install -r -t {remote}", what="install_app", check=False, seconds=limit)
        finally:
            await self._shell(f"rm -f {remote}", what="rm apk", check=False)
        if "Success" not in out:
            raise DeviceCommandError(f"install_app: {out.strip()[:300]}", serial=self.serial)
        self._imes = None  # an app may bring an input method

    async def list_packages(self) -> list[str]:
        out = await self._shell("pm list packages", what="list_packages")
        return sorted(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("package:"))

    async def get_apps(self) -> list[AppInfo]:
        listing = package_listing(await self._shell("pm list packages -f --show-versioncode", what="list_packages",
                                                    check=False))
        if not listing:  # before Android 9 there is no --show-versioncode
            listing = package_listing(await self._shell("pm list packages -f", what="list_packages"))
        names = await self._launchable(listing)
        cache = LabelCache(self._label_cache_dir, await self._device_key())
        missing = [listing.get(name, Listed(name)) for name in names if name not in self._labels
                   and cache.get(name, listing.get(name, Listed(name)).version) is None]
        if missing:
            await self._read_labels(missing, cache)
            try:
                cache.save()
            except OSError as exc:
                self._log.warning("label_cache_unwritable", serial=self.serial, path=str(cache.path), error=str(exc))
        apps = []
        for name in names:
            label = cache.get(name, listing.get(name, Listed(name)).version) or self._labels.get(name, (0, ""))[1]
            apps.append(AppInfo(name, label or label_for(name)))
        return apps

    async def _launchable(self, listing: dict[str, Listed]) -> list[str]:
        """The launchable packages (every package when the phone cannot say)."""
        out = await self._shell(LAUNCHER_QUERY, what="launcher apps", check=False)
        if query_failed(out):
            self._log.info("launcher_query_unavailable", serial=self.serial, output=out.strip()[:200],
                           message="cmd package query-activities is missing: listing every package")
            return sorted(listing) or await self.list_packages()
        return launcher_packages(out)

    async def _device_key(self) -> str:
        serial = (await self._shell("getprop ro.serialno", what="serial", check=False)).strip()
        return serial or self.serial

    async def _read_labels(self, packages: list[Listed], cache: LabelCache) -> None:
        """Read the labels of ``packages`` from their APKs into ``cache`` (and the memory cache)."""
        paths = {item.name: item.path for item in packages}
        for item in packages:
            if not item.path:
                out = await self._shell(f"pm path {shlex.quote(item.name)}", what="pm path", check=False)
                apks = [line.removeprefix("package:").strip() for line in out.splitlines()
                        if line.startswith("package:")]
                paths[item.name] = next((p for p in apks if p.endswith("/base.apk")), apks[0] if apks else None)
        sizes = await self._sizes([path for path in paths.values() if path])
        limit = asyncio.Semaphore(PARALLEL_READS)

        async def one(item: Listed) -> None:
            async with limit:
                label = await self._label_of(item.name, paths.get(item.name), sizes)
            if label is not None:
                cache.put(item.name, item.version, label)
                self._labels[item.name] = (item.version or 0, label)

        await asyncio.gather(*(one(item) for item in packages))

    async def _sizes(self, paths: list[str]) -> dict[str, int]:
        sizes: dict[str, int] = {}
        for start in range(0, len(paths), STAT_BATCH):
            batch = " ".join(shlex.quote(path) for path in paths[start:start + STAT_BATCH])
            out = await self._shell(f"stat -c '%s %n' {batch}", what="apk sizes", check=False)
            for line in out.splitlines():
                size, _, path = line.strip().partition(" ")
                if size.isdigit() and path:
                    sizes[path] = int(size)
        return sizes

    async def _label_of(self, package: str, path: str | None, sizes: dict[str, int]) -> str | None:
        """The label in the APK at ``path``; None (logged) when it cannot be read."""
        if not path or path not in sizes:
            self._log.info("app_label_unreadable", serial=self.serial, package=package,
                           reason="no APK path or size from pm/stat", path=path)
            return None
        read_range = dd_reader(self._exec_bytes_blocking, path)
        try:
            found = await self._call(app_label, read_range, sizes[path], what=f"label of {package}",
                                     limit=self._timeout * 4)
        except DeviceError as exc:
            self._log.info("app_label_unreadable", serial=self.serial, package=package, reason=str(exc))
            return None
        return clean_label(found.label, package)
