"""``RealismProfile``: how much the emulated phone behaves like a real one, one switch per behaviour.

The emulated adbd answers as the phones drivers meet do by default (``pixel-14``); the ``kind``
profile answers kindly (every dump works, every command exists) for the tests that need that. Each
quirk is a field of its own so a test can isolate it with ``dataclasses.replace``. Every behaviour
is deterministic: counts instead of timing, and a seed (``seed``) for the one thing real phones do
in arbitrary order.

Presets (``PROFILES``): ``kind``; ``pixel-14`` (Android 14, Google; the realistic one);
``foldable-14`` (pixel-14 plus a second display); ``android-10`` (older behaviours);
``xiaomi-13`` (MIUI: input injection needs "USB debugging (Security settings)").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
GBOARD_IME = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
VOICE_IME = "com.google.android.googlequicksearchbox/com.google.android.voicesearch.ime.VoiceInputMethodService"
ADB_IME = "com.android.adbkeyboard/.AdbIME"
#: uiautomator2's own input method, in the app-uiautomator.apk it installs (``adb install``) when missing
U2_IME = "com.github.uiautomator/.AdbKeyboard"
U2_APP = "com.github.uiautomator"
#: MIUI keeps its "USB debugging (Security settings)" switch in this system property; the
#: developer-options toggle sets it (scrcpy FAQ, "Mouse and keyboard do not work"; shell cannot
#: setprop it). The emulated phone has no such screen: ``settings put global`` of the same name
#: stands in for the toggle and sets the property too.
MIUI_INPUT_SWITCH = "persist.security.adbinput"
OPTIONAL_APPS = ("com.example.video", "com.example.bank")
DEFAULT_PROFILE = "pixel-14"    # EmulatedAdbd's default: a phone as real as the profiles make it
SIM_COMMAND_PROFILE = "pixel-14"  # ``python -m ufo_mobile sim --profile`` default


@dataclass(frozen=True, slots=True)
class RealismProfile:
    """One device profile. The defaults are the kind phone's; presets switch behaviours on."""

    name: str
    release: str = "14"                 # ro.build.version.release
    sdk: int = 34                       # ro.build.version.sdk
    vendor: str = "UFO"                 # ro.product.manufacturer
    brand: str = "ufo"                  # ro.product.brand
    build_id: str = "UP1A.231005.007"   # ro.build.id
    build_type: str = "userdebug"       # ro.build.type (real phones: user)
    security_patch: str = "2025-01-05"
    extra_props: tuple[tuple[str, str], ...] = ()
    imes: tuple[str, ...] = (LATIN_IME,)  # installed input methods, the first one selected
    seed: int = 0                       # for the orders real phones leave to a HashSet
    # 1. ``uiautomator dump`` on an ``animated: true`` screen: "ERROR: could not get idle state."
    idle_dump_fails: bool = False
    # 2. this many ``uiautomator dump`` calls after an app/activity change: "ERROR: null root node..."
    null_root_dumps: int = 0
    # 3. a second display: screencap warns without ``-d``; SurfaceFlinger lists both
    second_display: bool = False
    # 4. ``secure: true`` screens come back all black from screencap and takeScreenshot
    secure_black: bool = False
    # 5. uiautomator2 clipboard: setClipboard throws (Android 11+), getClipboard is null (10+)
    clipboard_set_denied: bool = False
    clipboard_get_null: bool = False
    # 6. ADB Keyboard installed; its receiver ignores this many broadcasts after each ``ime set``;
    #    ``am broadcast`` prints the FLAG_RECEIVER_FROM_SHELL flag (flg=0x400000) like Android 8+
    adb_keyboard: bool = True
    adb_keyboard_late: int = 0
    broadcast_flags: bool = False
    # 7. no mCurrentFocus/mFocusedApp/mResumedActivity lines; ``dumpsys activity top`` lists
    #    several tasks with the focused one not last
    focus_hidden: bool = False
    # 8. a soft keyboard while a text field has focus (drawn, takes taps, in dumpsys); the
    #    uiautomator2 dump has every window root (status bar, app, nav bar, IME) in seeded order
    soft_keyboard: bool = False
    window_roots: bool = False
    # 9. a running uiautomator2 server makes ``uiautomator dump`` fail (one UiAutomation at a time)
    u2_blocks_dump: bool = False
    # 10. ~300 installed packages with labels and APKs, some launchable
    many_packages: bool = False
    # 11. ``input keycombination`` exists (Android 11+)
    keycombination: bool = True
    # 12. ``input`` injection throws INJECT_EVENTS SecurityException until MIUI_INPUT_SWITCH is on
    inject_guard: bool = False
    # shipped apps that are not preinstalled, installed on this profile (video player, bank)
    extra_apps: tuple[str, ...] = ()

    @property
    def ime(self) -> str:
        """The selected input method."""
        return self.imes[0]

    @property
    def known_imes(self) -> tuple[str, ...]:
        """Every installed input method (``ime list -a``)."""
        return (*self.imes, ADB_IME) if self.adb_keyboard else self.imes

    def replace(self, **changes: object) -> RealismProfile:
        """A copy with some fields changed (``kind.replace(second_display=True)``)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


KIND = RealismProfile(name="kind", imes=(LATIN_IME,))

PIXEL_14 = RealismProfile(
    name="pixel-14", release="14", sdk=34, vendor="Google", brand="google", build_id="UP1A.231105.003",
    build_type="user", security_patch="2023-11-05", imes=(GBOARD_IME, VOICE_IME), seed=14,
    idle_dump_fails=True, null_root_dumps=1, secure_black=True, clipboard_set_denied=True,
    clipboard_get_null=True, adb_keyboard=False, broadcast_flags=True, focus_hidden=True,
    soft_keyboard=True, window_roots=True, u2_blocks_dump=True, many_packages=True, extra_apps=OPTIONAL_APPS,
)

FOLDABLE_14 = PIXEL_14.replace(name="foldable-14", second_display=True, seed=1414)

ANDROID_10 = PIXEL_14.replace(
    name="android-10", release="10", sdk=29, build_id="QQ3A.200805.001", security_patch="2020-08-05",
    seed=10, clipboard_set_denied=False, focus_hidden=False, keycombination=False,
)

XIAOMI_13 = PIXEL_14.replace(
    name="xiaomi-13", release="13", sdk=33, vendor="Xiaomi", brand="Xiaomi", build_id="TKQ1.221114.001",
    security_patch="2023-09-01", seed=13, inject_guard=True,
    extra_props=(("ro.miui.ui.version.name", "V140"), ("ro.miui.ui.version.code", "14"),
                 (MIUI_INPUT_SWITCH, "0")),
)

PROFILES: dict[str, RealismProfile] = {p.name: p for p in (KIND, PIXEL_14, FOLDABLE_14, ANDROID_10, XIAOMI_13)}


def profile_names() -> list[str]:
    return list(PROFILES)


def get_profile(profile: str | RealismProfile | None = None) -> RealismProfile:
    """A preset by name, a profile as given, or the default (``pixel-14``) for None."""
    if profile is None:
        return PROFILES[DEFAULT_PROFILE]
    if isinstance(profile, RealismProfile):
        return profile
    found = PROFILES.get(profile)
    if found is None:
        raise ValueError(f"unknown device profile {profile!r} (one of: {', '.join(PROFILES)})")
    return found


def device_props(profile: RealismProfile, serial: str, width: int, height: int) -> dict[str, str]:
    """``getprop`` of a phone with this profile (the kind one's are the simulator's own)."""
    build = f"{profile.build_id}/1:{profile.build_type}/release-keys"
    density = str(max(120, round(420 * width / 1080)))
    props = {
        "ro.product.name": "ufo_sim", "ro.product.model": "UFO Sim Phone", "ro.product.device": "ufo_sim",
        "ro.product.manufacturer": profile.vendor, "ro.product.brand": profile.brand,
        "ro.product.board": "ufo_sim", "ro.product.cpu.abi": "x86_64", "ro.product.cpu.abilist": "x86_64,arm64-v8a",
        "ro.build.version.release": profile.release, "ro.build.version.sdk": str(profile.sdk),
        "ro.build.version.codename": "REL", "ro.build.version.security_patch": profile.security_patch,
        "ro.build.type": profile.build_type, "ro.build.tags": "release-keys", "ro.build.id": profile.build_id,
        "ro.build.display.id": f"ufo_sim-{profile.build_type} {profile.release} {profile.build_id}",
        "ro.build.fingerprint": f"{profile.brand}/ufo_sim/ufo_sim:{profile.release}/{build}",
        "ro.build.characteristics": "default", "ro.serialno": serial, "ro.boot.serialno": serial,
        "ro.sf.lcd_density": density, "ro.debuggable": "1" if profile.build_type != "user" else "0",
        "ro.secure": "1", "ro.adb.secure": "0", "service.adb.root": "0", "sys.boot_completed": "1",
        "dev.bootcomplete": "1", "init.svc.bootanim": "stopped", "persist.sys.timezone": "UTC",
        "persist.sys.locale": "en-US", "ro.product.locale": "en-US", "gsm.operator.alpha": "UFO Mobile",
        "ro.config.screen_size": f"{width}x{height}",
    }
    props.update(profile.extra_props)
    return props
