"""The emulated device's package manager: the phone's apps plus, on profiles with ``many_packages``,
the catalog of a real phone's packages (``catalog.py``).

Every package has a label, a version, an APK path and, if it has a launcher activity, can be
started: a catalog app is installed on the ``SimPhone`` as a placeholder screen titled with its
label the first time it is launched. On those profiles the APKs are real files: the device's file
system asks ``apk_bytes`` for them on first access, and ``ufo_mobile.sim.android.apkgen.build_apk`` makes
them (imported only then).
"""

from __future__ import annotations

import base64
import hashlib
import io
import threading
import zipfile
import zlib
from dataclasses import dataclass

from ufo_mobile.sim.android.catalog import CatalogEntry, catalog
from ufo_mobile.sim.android.profile import RealismProfile
from ufo_mobile.sim.phone.model import App
from ufo_mobile.sim.phone.simphone import SimPhone

SYSTEM_PREFIXES = ("com.android.", "com.google.android.", "android")
FIRST_APP_UID = 10000


@dataclass(frozen=True, slots=True)
class Package:
    name: str
    label: str
    system: bool
    activity: str | None  # full class name of the launcher activity; None: not launchable
    version_code: int
    version_name: str
    path: str
    uid: int

    @property
    def code_dir(self) -> str:
        return self.path.rsplit("/", 1)[0]


def _b64(text: str) -> str:
    """22 characters + ``==``: the random-looking parts of ``/data/app/~~X==/pkg-Y==``."""
    return base64.urlsafe_b64encode(hashlib.md5(text.encode()).digest()).decode()  # noqa: S324 - a name


def kind_apk_path(package: str) -> str:
    """The path the kind phone has always printed (``pm path``)."""
    if package.startswith(SYSTEM_PREFIXES):
        name = package.rsplit(".", 1)[-1].capitalize()
        return f"/system/priv-app/{name}/{name}.apk"
    return f"/data/app/~~ufo{zlib.crc32(package.encode()) % 10**6:06d}==/{package}-1/base.apk"


def real_apk_path(package: str, system: bool) -> str:
    """Where Android 11+ keeps an APK: system images by partition, installed apps in /data/app."""
    if package == "android":
        return "/system/framework/framework-res.apk"
    if not system:
        return f"/data/app/~~{_b64(package + ':install')}/{package}-{_b64(package + ':code')}/base.apk"
    parts = package.split(".")
    name = "".join(part[:1].upper() + part[1:] for part in (parts[2:] if len(parts) > 2 else parts))
    partition = "/system/priv-app" if package.startswith("com.android.") else "/product/priv-app"
    if package.startswith("com.shannon."):
        partition = "/vendor/app"
    return f"{partition}/{name}/{name}.apk"


def placeholder_app(entry: CatalogEntry) -> App:
    """A catalog app as a sim app: one plain screen titled with the label."""
    label = entry.label.replace("{", "{{").replace("}", "}}")
    return App.model_validate({
        "package": entry.package, "label": entry.label, "activity": entry.activity or ".MainActivity",
        "launcher_icon": False, "start": "main",
        "screens": {"main": {"title": label, "body": [
            {"id": "placeholder", "text": label, "style": "secondary", "align": "center", "padding": [48, 96]}]}},
    })


class PackageManager:
    """Packages of one emulated device (thread-safe; the phone may gain apps at any time)."""

    def __init__(self, phone: SimPhone, profile: RealismProfile) -> None:
        self._phone = phone
        self._profile = profile
        self._catalog = {entry.package: entry for entry in catalog()} if profile.many_packages else {}
        self._lock = threading.Lock()
        self._fixed = [self._from_catalog(entry) for entry in self._catalog.values()]
        self._installed: dict[str, tuple[Package, CatalogEntry]] = {}  # by ``pm install``

    @property
    def realistic(self) -> bool:
        return bool(self._catalog)

    def packages(self) -> list[Package]:
        """Every installed package: the catalog's in its order, those ``pm install`` added, then the
        phone's own apps."""
        with self._lock:
            installed = dict(self._installed)
        found = [package for package in self._fixed if package.name not in installed]
        found += [package for package, _ in installed.values()]
        for index, app in enumerate(self._phone.installed_apps()):
            if app.package not in self._catalog and app.package not in installed:
                spec = self._phone.app(app.package)
                found.append(self._from_phone(app.package, app.label, spec.activity_of(spec.start), index))
        return found

    def get(self, name: str) -> Package | None:
        return next((package for package in self.packages() if package.name == name), None)

    def names(self) -> set[str]:
        return {package.name for package in self.packages()}

    def _version(self, system: bool, entry: CatalogEntry | None) -> tuple[int, str]:
        if entry is None or (system and entry.package.startswith(("android", "com.android."))):
            return (self._profile.sdk, self._profile.release) if self.realistic else (1, "1.0")
        return entry.version

    def _from_catalog(self, entry: CatalogEntry) -> Package:
        code, name = self._version(entry.system, entry)
        uid = 1000 if entry.package == "android" else FIRST_APP_UID + zlib.crc32(entry.package.encode()) % 400
        return Package(entry.package, entry.label, entry.system, entry.activity, code, name,
                       real_apk_path(entry.package, entry.system), uid)

    def _from_phone(self, package: str, label: str, activity: str, index: int) -> Package:
        system = package.startswith(SYSTEM_PREFIXES)
        code, name = self._version(system, None)
        path = real_apk_path(package, system) if self.realistic else kind_apk_path(package)
        return Package(package, label, system, activity, code, name, path, FIRST_APP_UID + 400 + index)

    def ensure_on_phone(self, name: str) -> bool:
        """Make a launchable package startable on the phone (installing a catalog app's placeholder
        screen the first time); False if it is not installed or has no launcher activity."""
        installed = {app.package for app in self._phone.installed_apps()}
        if name in installed:
            return True
        with self._lock:
            added = self._installed.get(name)
        entry = added[1] if added is not None else self._catalog.get(name)
        if entry is None or entry.activity is None:
            return False
        with self._lock:
            if name not in {app.package for app in self._phone.installed_apps()}:
                self._phone.install(placeholder_app(entry))
        return True

    def install(self, name: str, label: str, activity: str | None, version: tuple[int, str]) -> Package:
        """Register an APK ``pm install`` read (the caller writes its bytes at the returned path)."""
        path = real_apk_path(name, False) if self.realistic else kind_apk_path(name)
        uid = FIRST_APP_UID + 800 + zlib.crc32(name.encode()) % 100
        package = Package(name, label, False, activity, version[0], version[1], path, uid)
        with self._lock:
            self._installed[name] = (package, CatalogEntry(name, label, False, activity))
        return package

    def uninstall(self, name: str) -> Package | None:
        """Forget a package ``pm install`` added; None if it was not one of those."""
        with self._lock:
            removed = self._installed.pop(name, None)
        return None if removed is None else removed[0]

    # -- APK files ---------------------------------------------------------------------------------

    def apk_bytes(self, full_path: str) -> bytes | None:
        """The file system's resolver: the APK at ``full_path`` if a package lives there."""
        if not self.realistic or not full_path.endswith(".apk"):
            return None
        package = next((p for p in self.packages() if p.path == full_path), None)
        if package is None:
            return None
        return build_apk_bytes(package)


def build_apk_bytes(package: Package) -> bytes:
    """Real APK bytes from ``apkgen`` (another engineer's module, imported lazily); until it exists,
    a stand-in ZIP with the manifest's place held, so the file is there and has a size."""
    try:
        from ufo_mobile.sim.android import apkgen  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return _stub_apk(package)
    data: bytes = apkgen.build_apk(package.name, package.label, version_code=package.version_code,
                                   version_name=package.version_name)
    return data


def _stub_apk(package: Package) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        info = zipfile.ZipInfo("AndroidManifest.xml", date_time=(2008, 1, 1, 0, 0, 0))
        archive.writestr(info, f"package={package.name}\nlabel={package.label}\n".encode())
    return buffer.getvalue()
