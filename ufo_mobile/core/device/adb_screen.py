"""What the adb driver reads about the screen besides the dump: screenshots, the soft keyboard and
the app in front.

- Screenshots: ``screencap -p`` over a shell stream merges stderr, and a phone with several
  displays (foldables) warns there before the PNG when no display is named (``[Warning] Multiple
  displays were found...``). So the display is named (``-d``, from ``dumpsys SurfaceFlinger
  --display-id``: the ``device.display_id`` setting, else the first) whenever the phone lists more
  than one, and whatever precedes the PNG signature or follows its IEND chunk is cut off. The caller
  always gets a PNG, or a ``DeviceCommandError``.
- ``keyboard_state``: ``mInputShown`` of ``dumpsys input_method``, and the frame of the input
  method's window from ``dumpsys window windows`` (``uiautomator dump`` has the app's window only).
- ``current_app`` never guesses: ``dumpsys window`` (``mCurrentFocus``/``mFocusedApp``), then
  ``dumpsys activity activities`` (``topResumedActivity``/``ResumedActivity``/``mResumedActivity``);
  when neither names the app it raises, and the caller uses the dump's package. (adbutils'
  ``app_current`` falls through to ``dumpsys activity top`` and keeps its last task: another app on
  several Android 13-15 builds, openatx/adbutils #176.) A phone whose ``dumpsys window`` names no
  app (those builds) would cost every observation a round trip for nothing, so once ``dumpsys
  activity`` has named it, that is asked first (``dumpsys window`` again only when it does not say),
  until the driver connects again.
"""

from __future__ import annotations

import re

from ufo_mobile.core.device.adb_base import AdbBase
from ufo_mobile.core.device.base import CurrentApp, KeyboardState
from ufo_mobile.core.device.dumpsys import focused_app, ime_frame, keyboard_shown, resumed_activity
from ufo_mobile.errors import DeviceCommandError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_IEND = b"IEND\xaeB`\x82"
_DISPLAY_LINE = re.compile(r"^Display (\d+)\b", re.MULTILINE)


def png_from(data: bytes) -> bytes | None:
    """The PNG inside ``data`` (messages before its signature or after its IEND chunk cut off), or
    None when there is no PNG."""
    start = data.find(PNG_SIGNATURE)
    if start < 0:
        return None
    end = data.find(_IEND, start)
    return data[start:end + len(_IEND)] if end >= 0 else data[start:]


def display_ids(surface_flinger: str) -> list[str]:
    """The display ids of ``dumpsys SurfaceFlinger --display-id`` (``Display <id> (HWC display N): ...``)."""
    return _DISPLAY_LINE.findall(surface_flinger)


class AdbScreenMixin(AdbBase):
    """``AdbDriver``'s screen: screenshots, the soft keyboard and the app in front."""

    async def screenshot(self) -> bytes:
        display = await self._screencap_display()
        command = "screencap -p" + (f" -d {display}" if display else "")
        data = await self._exec_bytes(command, what="screenshot")
        png = png_from(data)
        if png is None or not png.endswith(_IEND):  # nothing, or cut off: a phone gone mid-command?
            what = "no PNG" if png is None else "a PNG cut off before its end"
            raise await self.confirm_failure(DeviceCommandError(
                f"screencap returned {what} ({len(data)} bytes: {data[:80]!r})", serial=self.serial))
        if len(png) != len(data):
            self._log.debug("screencap_extra_output", serial=self.serial, dropped=len(data) - len(png))
        return png

    async def _screencap_display(self) -> str | None:
        """The display to name to ``screencap``: the configured one, else the first when there are
        several; None for a phone with one display."""
        if self._displays is None:
            listing = await self._shell("dumpsys SurfaceFlinger --display-id", what="displays", check=False)
            self._displays = display_ids(listing)
        wanted = self._display_id
        if wanted is not None:
            if self._displays and wanted not in self._displays:
                raise DeviceCommandError(f"device.display_id {wanted} is not a display of this phone "
                                         f"(it has {', '.join(self._displays)})", serial=self.serial)
            return wanted
        return self._displays[0] if len(self._displays) > 1 else None

    async def keyboard_state(self) -> KeyboardState:
        shown = keyboard_shown(await self._shell("dumpsys input_method", what="dumpsys input_method", check=False))
        if shown is None:
            raise DeviceCommandError("dumpsys input_method does not say whether the keyboard is shown",
                                     serial=self.serial)
        if not shown:
            return KeyboardState(False, None)
        windows = await self._shell("dumpsys window windows", what="dumpsys window", check=False)
        return KeyboardState(True, ime_frame(windows))

    async def current_app(self) -> CurrentApp:
        """The app in front (module docstring), from the ``dumpsys`` that named it last time first."""
        sources = [self._focused_app, self._resumed_activity]
        if self._activities_first:
            sources.reverse()
        for source in sources:
            found = await source()
            if found is not None:
                self._activities_first = source == self._resumed_activity
                return found
        raise DeviceCommandError("neither dumpsys window nor dumpsys activity names the app in front",
                                 serial=self.serial)

    async def _focused_app(self) -> CurrentApp | None:
        return focused_app(await self._shell("dumpsys window", what="dumpsys window", check=False))

    async def _resumed_activity(self) -> CurrentApp | None:
        return resumed_activity(await self._shell("dumpsys activity activities", what="dumpsys activity",
                                                  check=False))
