"""``dumpsys window`` and ``dumpsys activity`` of the emulated device, kind and realistic.

The kind phone prints every line a current-app parser looks for. Realistic profiles print what
phones print:

* ``focus_hidden``: no ``mCurrentFocus``/``mFocusedApp`` in ``dumpsys window`` (several Android
  13-15 builds: openatx/uiautomator2#952, #1148; openatx/adbutils#176); ``dumpsys activity
  activities`` in Android 12+ wording (Task.dump's ``topResumedActivity=``,
  ActivityTaskManagerService's ``ResumedActivity:``; no ``mResumedActivity``); ``dumpsys activity
  top`` lists every task's top activity, the focused one first, so a parser that keeps the last
  one (adbutils ``app_current``) gets another app.
* ``soft_keyboard``: the IME window (``Window{... InputMethod}``, its frame, shown or hidden) and
  ``mInputMethodWindow`` (WindowManagerService.dumpWindowsLocked, WindowState.dump).
"""

from __future__ import annotations

import zlib

from ufo_mobile.sim.android.devstate import DeviceState
from ufo_mobile.sim.android.intents import short_activity
from ufo_mobile.sim.phone import keyboard
from ufo_mobile.sim.phone.simphone import LAUNCHER


def hex_id(text: str) -> str:
    """A stable identity hash as Android prints them (``Window{1a2b3c4 ...}``)."""
    return f"{zlib.crc32(text.encode()) & 0xFFFFFFF:07x}"


def task_id(package: str) -> int:
    return 10 + zlib.crc32(package.encode()) % 90


def pid_of(package: str) -> int:
    return 2000 + zlib.crc32(package.encode()) % 20000


def _record(package: str, activity: str) -> str:
    short = short_activity(package, activity)
    return f"ActivityRecord{{{hex_id(short)} u0 {package}/{short} t{task_id(package)}}}"


def _focus(device: DeviceState) -> tuple[str, str, str]:
    """(package, full activity, short activity) of the focused app."""
    current = device.phone.current_app()
    return current.package, current.activity, short_activity(current.package, current.activity)


def _ime_window(device: DeviceState) -> tuple[str, str]:
    """(the IME window's name, its ``dumpsys window windows`` entry)."""
    width, height = device.phone.screen_size()
    shown = device.phone.keyboard_shown()
    package = device.profile.ime.partition("/")[0]
    frame = keyboard.window_rect(width, height)
    rect = f"[{frame.left},{frame.top}][{frame.right},{frame.bottom}]"
    name = f"Window{{{hex_id('ime')} u0 InputMethod}}"
    entry = (f"    mDisplayId=0 rootTaskId=1 package={package}\n"
             "    mAttrs={(0,0)(fillxwrap) gr=BOTTOM CENTER_VERTICAL sim={adjust=pan} ty=INPUT_METHOD "
             "fmt=TRANSPARENT wanim=0x1030056}\n"
             f"    Requested w={width} h={frame.height} mLayoutSeq=42\n"
             "    mIsImWindow=true mIsWallpaper=false mIsFloatingLayer=true\n"
             f"    mViewVisibility={'0x0' if shown else '0x8'} mHaveFrame=true mObscured=false\n"
             f"    Frames: parent=[0,0][{width},{height}] display=[0,0][{width},{height}]\n"
             f"    mFrame={rect} last={rect}\n"
             f"    mHasSurface={str(shown).lower()} isReadyForDisplay()={str(shown).lower()}\n")
    return name, entry


def window_dump(device: DeviceState) -> str:
    package, activity, short = _focus(device)
    profile = device.profile
    width, height = device.phone.screen_size()
    window = f"Window{{{hex_id(activity)} u0 {package}/{activity}}}"
    record = f"ActivityRecord{{{hex_id(short)} u0 {package}/{short} t{task_id(package)}}}"
    systemui = "    mDisplayId=0 rootTaskId=1 package=com.android.systemui\n"
    windows = [(f"Window{{{hex_id('nav')} u0 NavigationBar0}}", systemui),
               (f"Window{{{hex_id('status')} u0 StatusBar}}", systemui)]
    if profile.soft_keyboard:
        windows.append(_ime_window(device))
    windows.append((window, f"    mDisplayId=0 rootTaskId={task_id(package)} package={package}\n"
                            f"    Requested w={width} h={height} mLayoutSeq=42\n"
                            "    mHasSurface=true isReadyForDisplay()=true\n"))
    listing = "".join(f"  Window #{index} {name}:\n{entry}" for index, (name, entry) in enumerate(windows))
    tail = f"  mInputMethodWindow={windows[2][0]}\n" if profile.soft_keyboard else ""
    if not profile.focus_hidden:
        tail += f"  mCurrentFocus={window}\n  mFocusedApp={record}\n"
    return (
        "WINDOW MANAGER WINDOWS (dumpsys window windows)\n" + listing + "\n"
        "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n"
        f"  Display: mDisplayId=0 rootTasks=3\n    init={width}x{height} {device.density()}dpi "
        f"cur={width}x{height} app={width}x{height} rng={width}x{width}-{height}x{height}\n"
        f"  mGlobalConfiguration={{1.0 ?mcc?mnc [en_US] ldltr sw411dp w411dp h914dp {device.density()}dpi port}}\n"
        "  mHasPermanentDpad=false\n  mTopFocusedDisplayId=0\n" + tail
    )


def activities_dump(device: DeviceState) -> str:
    if device.profile.focus_hidden:
        return _activities_dump_android14(device)
    package, _, short = _focus(device)
    record = f"ActivityRecord{{{hex_id(short)} u0 {package}/{short} t{task_id(package)}}}"
    return (
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
        "Display #0 (activities from top to bottom):\n"
        f"  * Task{{{hex_id(package)} #{task_id(package)} type=standard A=10123:{package} U=0 visible=true "
        "mode=fullscreen translucent=false sz=1}\n"
        f"    topResumedActivity={record}\n"
        f"    * Hist  #0: {record}\n      packageName={package} processName={package}\n"
        f"      app=ProcessRecord{{{hex_id('p' + package)} {pid_of(package)}:{package}/u0a123}}\n\n"
        f"  ResumedActivity: {record}\n  mResumedActivity: {record}\n  mFocusedApp={record}\n"
    )


def _activities_dump_android14(device: DeviceState) -> str:
    """RootWindowContainer.dumpActivities: every task top to bottom, Task.dump's
    ``topResumedActivity=`` on the resumed one, then ``Resumed:`` and ``ResumedActivity:``."""
    tops = device.phone.task_tops()
    out = ["ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n",
           "Display #0 (activities from top to bottom):\n"]
    for index, top in enumerate(tops):
        record = _record(*top)
        kind = "home" if top.package == LAUNCHER else "standard"
        out.append(f"  * Task{{{hex_id(top.package)} #{task_id(top.package)} type={kind} A=10123:{top.package} "
                   f"U=0 visible={str(index == 0).lower()} visibleRequested={str(index == 0).lower()} "
                   "mode=fullscreen translucent=false sz=1}\n")
        out.append("    isSleeping=false\n")
        if index == 0:
            out.append(f"    topResumedActivity={record}\n")
        out.append(f"    * Hist  #0: {record}\n      packageName={top.package} processName={top.package}\n"
                   f"      app=ProcessRecord{{{hex_id('p' + top.package)} {pid_of(top.package)}:{top.package}"
                   "/u0a123}\n")
    resumed = _record(*tops[0])
    out.append(f"  Resumed activities in task display areas (from top to bottom):\n    Resumed: {resumed}\n\n"
               f"  ResumedActivity: {resumed}\n")
    return "".join(out)


def top_dump(device: DeviceState) -> str:
    """``dumpsys activity top``: the kind phone lists the focused activity only; a realistic one
    lists every task's top activity, the focused first (not last)."""
    tops = device.phone.task_tops() if device.profile.focus_hidden else [device.phone.current_app()]
    out = []
    for index, (package, activity) in enumerate(tops):
        short = short_activity(package, activity)
        resumed = "mResumed=true mStopped=false" if index == 0 else "mResumed=false mStopped=true"
        out.append(f"TASK 10123:{package} id={task_id(package)} userId=0\n"
                   f"  ACTIVITY {package}/{short} {hex_id(short)} pid={pid_of(package)}\n"
                   f"    Local Activity {{0}} State:\n      {resumed} mFinished=false\n")
    return "".join(out)
