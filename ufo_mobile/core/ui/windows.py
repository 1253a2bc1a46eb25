"""Which window of a dump is which: the on-screen keyboard's (by package), the app's (the largest
that is neither a keyboard nor system UI), and the screen rectangle the windows lie on."""

from __future__ import annotations

from collections.abc import Collection

from ufo_mobile.core.ui.hierarchy import Bounds, UITree

#: Package prefixes of input methods (on-screen keyboards); their keys are not app controls.
DEFAULT_KEYBOARD_PACKAGES: frozenset[str] = frozenset({
    "com.google.android.inputmethod", "com.google.android.apps.inputmethod", "com.android.inputmethod",
    "com.sohu.inputmethod", "com.baidu.input", "com.iflytek.inputmethod", "com.tencent.qqpinyin",
    "com.touchtype.swiftkey", "com.microsoft.swiftkey", "com.samsung.android.honeyboard",
    "com.sec.android.inputmethod", "com.huawei.ohos.inputmethod", "com.cootek.smartinput",
    "org.pocketworkstation.pckeyboard", "com.menny.android.anysoftkeyboard", "ru.yandex.androidkeyboard",
    "com.syntellia.fleksy", "com.vivo.ai.ime", "com.emoji.keyboard", "com.jb.emoji.gokeyboard",
})
_DEFAULT_PREFIXES = tuple(DEFAULT_KEYBOARD_PACKAGES)  # str.startswith takes a tuple: one call for them all
_KEYBOARD_MARKERS = ("inputmethod", "keyboard")
_SYSTEM_PACKAGES = frozenset({"com.android.systemui", "android"})


def is_keyboard_package(package: str, keyboard_packages: Collection[str] = DEFAULT_KEYBOARD_PACKAGES,
                        *, app_package: str = "") -> bool:
    """True for an input-method package; never for the app being driven."""
    if not package or package == app_package:
        return False
    prefixes = _DEFAULT_PREFIXES if keyboard_packages is DEFAULT_KEYBOARD_PACKAGES else tuple(keyboard_packages)
    if package.startswith(prefixes):
        return True
    lowered = package.lower()
    return any(marker in lowered for marker in _KEYBOARD_MARKERS) or "ime" in lowered.split(".")


def infer_screen(tree: UITree) -> Bounds:
    """The screen rectangle implied by the roots.

    A dump whose roots do not start at the origin is a centred dialog; the screen is then assumed
    to have the same margin on the far side (``left + right`` by ``top + bottom``).
    """
    box = tree.bounds
    return Bounds(0, 0, max(1, box.right + max(0, box.left)), max(1, box.bottom + max(0, box.top)))


def screen_for(tree: UITree, screen_size: tuple[int, int] | None) -> Bounds:
    """The screen rectangle: the caller's size (turned to match the dump's orientation) or inferred."""
    if screen_size is None:
        return infer_screen(tree)
    width, height = screen_size
    full = [root.bounds for root in tree.roots if root.bounds.left == 0 and root.bounds.top == 0]
    if full:
        widest = max(full, key=lambda box: box.area)
        if widest.width != widest.height and (widest.width > widest.height) != (width > height):
            width, height = height, width  # the caller gave the natural orientation of a rotated screen
    return Bounds(0, 0, width, height)


def infer_app_package(tree: UITree, keyboard_packages: Collection[str] = DEFAULT_KEYBOARD_PACKAGES) -> str:
    """The package of the largest window that is neither a keyboard nor system UI."""
    roots = [r for r in tree.roots if not is_keyboard_package(r.package, keyboard_packages)]
    apps = [r for r in roots if r.package not in _SYSTEM_PACKAGES] or roots or list(tree.roots)
    return max(apps, key=lambda root: root.bounds.area).package


def keyboard_visible(tree: UITree, screen: Bounds, *, app_package: str = "",
                     keyboard_packages: Collection[str] = DEFAULT_KEYBOARD_PACKAGES) -> bool:
    """True when a node of an input method is on screen."""
    return any(
        is_keyboard_package(root.package, keyboard_packages, app_package=app_package)
        and root.bounds.intersect(screen) is not None
        for root in tree.roots
    )


def keyboard_band(tree: UITree, screen: Bounds, *, app_package: str = "",
                  keyboard_packages: Collection[str] = DEFAULT_KEYBOARD_PACKAGES) -> Bounds | None:
    """The band across the bottom of the screen an input method's window takes, when the dump has one
    (an iPhone's keyboard is in WebDriverAgent's tree): the app's controls under it cannot be tapped (a
    touch there types). None when there is no such band; a keyboard window as tall as most of the
    screen (some input methods' windows are) is not taken for one."""
    bands = [root.bounds for root in tree.roots
             if is_keyboard_package(root.package, keyboard_packages, app_package=app_package)
             and root.bounds.left <= screen.left and root.bounds.right >= screen.right
             and root.bounds.bottom >= screen.bottom and root.bounds.top > screen.top
             and (root.bounds.bottom - root.bounds.top) < 0.6 * (screen.bottom - screen.top)]
    if not bands:
        return None
    top = min(band.top for band in bands)
    return Bounds(screen.left, top, screen.right, screen.bottom)
