"""``pm install`` / ``cmd package install`` and ``pm uninstall`` on the emulated device.

``pm install [-r] [-t] [-g] ... PATH`` installs an APK pushed to the device (adbutils' ``install``:
``sync`` push, then this); ``cmd package install -S SIZE`` reads the APK from stdin (what ``adb install``
runs over ``exec:`` when the device has the ``cmd`` feature). The APK is read as PackageManager
would: its binary manifest gives the package, version and launcher activity, and the label comes
from the resource table (ufo_mobile's APK reader, a pure parser, does the reading). An installed
package is listed, has a path and a size (its bytes are its APK), and can be launched; installing
uiautomator2's app-uiautomator.apk also registers its input method ``com.github.uiautomator/
.AdbKeyboard``. Output is PackageManagerShellCommand's: ``Success``, or ``Failure [REASON: ...]`` with
exit status 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from ufo_mobile.errors import ApkError
from ufo_mobile.sim.android.devfs import FsError
from ufo_mobile.sim.android.profile import U2_APP, U2_IME
from ufo_mobile.sim.android.shio import Ctx

MAX_APK = 64 * 1024 * 1024
_VALUED = {"-i", "--user", "-S", "-p", "--install-reason", "--originating-uri", "--referrer", "--abi",
           "--install-location", "--force-uuid", "--pkg"}
#: input methods an APK brings, by package (the emulated device knows only uiautomator2's)
IMES_OF = {U2_APP: (U2_IME,)}


@dataclass(frozen=True)
class ApkFacts:
    package: str
    label: str
    activity: str | None
    version: tuple[int, str]


def read_apk(data: bytes) -> ApkFacts:
    """What PackageManager reads from an APK. Raises ``ApkError``."""
    # The device layer's reader is a pure parser of bytes; the emulated device borrows it rather
    # than keep a second one (the same reader checks the APKs apkgen writes).
    from ufo_mobile.apk import (
        MANIFEST,
        MANIFEST_LIMIT,
        app_label,
        parse_manifest,
        read_central_directory,
        read_entry,
    )

    def read_range(offset: int, length: int) -> bytes:
        return data[offset:offset + length]

    label = app_label(read_range, len(data))
    manifest = parse_manifest(read_entry(read_range, read_central_directory(read_range, len(data)), MANIFEST,
                                         limit=MANIFEST_LIMIT))
    activity = manifest.launcher_activities[0] if manifest.launcher_activities else None
    return ApkFacts(label.package, label.label, activity, (label.version_code, manifest.version_name or ""))


def _split(args: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    paths: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in _VALUED and rest:
            options[arg] = rest.pop(0)
        elif arg.startswith("-"):
            options[arg] = ""
        else:
            paths.append(arg)
    return options, paths


async def install(ctx: Ctx, args: list[str]) -> int:
    options, paths = _split(args)
    if paths:
        try:
            data = ctx.device.fs.read(paths[0])
        except FsError:
            await ctx.err(f"Exception occurred while executing 'install':\njava.lang.IllegalArgumentException: "
                          f"Error: Can't open file: {paths[0]}\n")
            return 255
    elif options.get("-S", "").isdigit() and int(options["-S"]) <= MAX_APK:
        data = await _read_exactly(ctx, int(options["-S"]))
        if len(data) != int(options["-S"]):
            return await _failure(ctx, "INSTALL_FAILED_INVALID_APK", "the stream ended early")
    else:
        await ctx.err("Error: APK content must be streamed\n")
        return 1
    try:
        facts = read_apk(data)
    except ApkError as exc:
        return await _failure(ctx, "INSTALL_PARSE_FAILED_NOT_APK", f"Failed to parse: {exc}")
    device = ctx.device
    package = device.packages.install(facts.package, facts.label, facts.activity, facts.version)
    device.fs.write(package.path, data, make_parents=True)
    for ime in IMES_OF.get(facts.package, ()):
        device.add_ime(ime)
    await ctx.out("Success\n")
    return 0


async def _read_exactly(ctx: Ctx, size: int) -> bytes:
    """``size`` bytes of stdin (the host keeps the stream open for the answer: no EOF to wait for)."""
    data = bytearray()
    while len(data) < size and (chunk := await ctx.io.stdin.read()):
        data += chunk
    return bytes(data[:size])


async def _failure(ctx: Ctx, reason: str, detail: str) -> int:
    await ctx.out(f"Failure [{reason}: {detail}]\n")
    return 1


async def uninstall(ctx: Ctx, args: list[str]) -> int:
    names = [arg for arg in args if not arg.startswith("-")]
    if not names:
        return await ctx.fail("Error: package name not specified", 1)
    device = ctx.device
    removed = device.packages.uninstall(names[-1])
    if removed is None:
        await ctx.out("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
        return 1
    device.remove_imes(removed.name)
    try:
        device.fs.remove(removed.code_dir, recursive=True)
    except FsError:
        pass
    await ctx.out("Success\n")
    return 0
