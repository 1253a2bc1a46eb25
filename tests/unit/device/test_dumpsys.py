"""The ``dumpsys`` readers against what Android versions print (trimmed, field order and spacing kept).

Formats: WindowManagerService.dumpWindowsLocked / WindowState.dump (``Window #N Window{...}:``,
``mOwnerUid=... package=...``, ``mViewVisibility=0x..``, ``mFrame=`` up to Android 10, the ``Frames:``
line from 11), DisplayContent (``mCurrentFocus=``, ``mFocusedApp=``), RootWindowContainer /
ActivityTaskManagerService (``topResumedActivity=``, ``ResumedActivity:``, ``mResumedActivity:``),
InputMethodManagerService / ImeVisibilityStateComputer (``mInputShown=``)."""

from __future__ import annotations

from ufo_mobile.core.device.base import CurrentApp
from ufo_mobile.core.device.dumpsys import focused_app, ime_frame, keyboard_shown, resumed_activity, window_packages


def lines(*rows: str) -> str:
    """A dump from its lines (long ones given in parts, as real dumps run past this file's width)."""
    return "\n".join(rows) + "\n"


WINDOW_ANDROID_10 = lines(
    "WINDOW MANAGER WINDOWS (dumpsys window windows)",
    "  Window #0 Window{bdae67a u0 InputMethod}:",
    "    mDisplayId=0 stackId=0 mSession=Session{2b3f00f 19539:u0a10056} mClient=android.os.BinderProxy@59092a5",
    "    mOwnerUid=10056 mShowToOwnerOnly=true package=com.baidu.input_yijia appop=NONE",
    "    mAttrs={(0,0)(fillxwrap) gr=BOTTOM CENTER_VERTICAL sim={adjust=pan} ty=INPUT_METHOD fmt=TRANSPARENT"
    " wanim=0x1030056",
    "      fl=NOT_FOCUSABLE LAYOUT_IN_SCREEN SPLIT_TOUCH HARDWARE_ACCELERATED DRAWS_SYSTEM_BAR_BACKGROUNDS}",
    "    Requested w=1080 h=2280 mLayoutSeq=207584",
    "    mIsImWindow=true mIsWallpaper=false mIsFloatingLayer=true mWallpaperVisible=false",
    "    mBaseLayer=141000 mSubLayer=0 mAnimLayer=0+=0 mLastLayer=0",
    "    mToken=WindowToken{92f628b android.os.Binder@c12205a}",
    "    mViewVisibility=0x0 mHaveFrame=true mObscured=false",
    "    mFrame=[0,1321][1080,2280] last=[0,1321][1080,2280]",
    "  Window #1 Window{987738d u0 NavigationBar}:",
    "    mOwnerUid=10132 mShowToOwnerOnly=true package=com.android.systemui appop=NONE",
    "    mViewVisibility=0x0 mHaveFrame=true mObscured=false",
    "  Window #2 Window{2b6d2f8 u0 com.android.settings/com.android.settings.Settings}:",
    "    mOwnerUid=1000 mShowToOwnerOnly=true package=com.android.settings appop=NONE",
    "    mViewVisibility=0x0 mHaveFrame=true mObscured=false",
    "",
    "  mGlobalConfiguration={1.0 460mcc2mnc [zh_CN_#Hans] ldltr sw392dp w392dp h757dp 440dpi nrml long port}",
    "  mHasPermanentDpad=false",
    "  mTopFocusedDisplayId=0",
    "  mInputMethodTarget in display# 0 Window{2b6d2f8 u0 com.android.settings/com.android.settings.Settings}",
    "  mCurrentFocus=Window{2b6d2f8 u0 com.android.settings/com.android.settings.Settings}",
    "  mFocusedApp=AppWindowToken{d1b7c7e token=Token{7f6b0b9 ActivityRecord{a3c7c80 u0"
    " com.android.settings/.Settings t5}}}",
)

# Android 14 (an emulator's, camera permission dialog over an app, the keyboard up): no focus lines,
# as on several Android 13-15 builds (openatx/adbutils #176)
WINDOW_ANDROID_14 = lines(
    "WINDOW MANAGER WINDOWS (dumpsys window windows)",
    "  Window #0 Window{829de41 u0 ScreenDecorOverlayBottom}:",
    "    mDisplayId=0 rootTaskId=1 mSession=Session{a 1234:u0a10120} mClient=android.os.BinderProxy@1",
    "    mOwnerUid=10120 showForAllUsers=true package=com.android.systemui appop=NONE",
    "    Frames: parent=[0,2274][1080,2400] display=[0,2274][1080,2400] frame=[0,2274][1080,2400]"
    " last=[0,2274][1080,2400] insetsChanged=false",
    "  Window #1 Window{9ef7b58 u0 StatusBar}:",
    "    mOwnerUid=10120 showForAllUsers=true package=com.android.systemui appop=NONE",
    "    Frames: parent=[0,0][1080,128] display=[0,0][1080,128] frame=[0,0][1080,128] last=[0,0][1080,128]"
    " insetsChanged=false",
    "  Window #2 Window{ee4ee0c u0 InputMethod}:",
    "    mOwnerUid=10133 showForAllUsers=false package=com.google.android.inputmethod.latin appop=NONE",
    "    mViewVisibility=0x0 mHaveFrame=true mObscured=false",
    "    Frames: parent=[0,1517][1080,2400] display=[0,1517][1080,2400] frame=[0,1517][1080,2400]"
    " last=[0,1517][1080,2400] insetsChanged=false",
    "  Window #3 Window{4d0ddca u0 com.google.android.permissioncontroller/"
    "com.android.permissioncontroller.permission.ui.GrantPermissionsActivity}:",
    "    mOwnerUid=10151 showForAllUsers=false package=com.google.android.permissioncontroller appop=NONE",
    "    Frames: parent=[0,0][1080,2400] display=[0,0][1080,2400] frame=[28,746][1052,1718]"
    " last=[28,746][1052,1718] insetsChanged=false",
    "  Window #4 Window{3a9bb36 u0 com.saucelabs.mydemoapp.android/"
    "com.saucelabs.mydemoapp.android.view.activities.MainActivity}:",
    "    mOwnerUid=10190 showForAllUsers=false package=com.saucelabs.mydemoapp.android appop=NONE",
    "    Frames: parent=[0,0][1080,2400] display=[0,0][1080,2400] frame=[0,0][1080,2400] last=[0,0][1080,2400]"
    " insetsChanged=false",
    "",
    "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)",
    "  mTopFocusedDisplayId=0",
)

# Gboard on some builds: a window from below the status bar, its keys below the content insets
WINDOW_TALL_IME = lines(
    "  Window #3 Window{a1 u0 InputMethod}:",
    "    mViewVisibility=0x0 mHaveFrame=true mObscured=false",
    "    mGivenContentInsets=[0,1389][0,0] mGivenVisibleInsets=[0,1389][0,0]",
    "    Frames: parent=[0,128][1080,2400] display=[0,128][1080,2400] frame=[0,128][1080,2400]"
    " last=[0,128][1080,2400]",
    "    isOnScreen=true",
    "  Window #4 Window{b2 u0 com.reelhouse.society/com.reelhouse.society.MainActivity}:",
    "    mDrawState=HAS_DRAWN",
)

ACTIVITIES_ANDROID_14 = lines(
    "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)",
    "Display #0 (activities from top to bottom):",
    "  * Task{3f5d1e2 #93 type=standard A=1000:com.android.settings U=0 visible=true visibleRequested=true"
    " mode=fullscreen translucent=false sz=1}",
    "    mLastPausedActivity: ActivityRecord{d7d5a0c u0 com.android.settings/.Settings t93}",
    "    isSleeping=false",
    "    topResumedActivity=ActivityRecord{d7d5a0c u0 com.android.settings/.Settings t93}",
    "    * Hist  #0: ActivityRecord{d7d5a0c u0 com.android.settings/.Settings t93}",
    "  * Task{61c5a33 #1 type=home U=0 visible=false visibleRequested=false mode=fullscreen translucent=false"
    " sz=1}",
    "    * Hist  #0: ActivityRecord{9f8e2aa u0 com.google.android.apps.nexuslauncher/.NexusLauncherActivity t2}",
    "",
    "  Resumed activities in task display areas (from top to bottom):",
    "    Resumed: ActivityRecord{d7d5a0c u0 com.android.settings/.Settings t93}",
    "",
    "  ResumedActivity: ActivityRecord{d7d5a0c u0 com.android.settings/.Settings t93}",
)

ACTIVITIES_ANDROID_10 = lines(
    "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)",
    "Display #0 (activities from top to bottom):",
    "",
    "  Stack #17: type=standard mode=fullscreen",
    "    Task id #17",
    "    * TaskRecord{6a7b1c2 #17 A=com.tencent.mm U=0 StackId=17 sz=1}",
    "      * Hist #0: ActivityRecord{9b6e52d u0 com.tencent.mm/.ui.LauncherUI t17}",
    "    mResumedActivity: ActivityRecord{9b6e52d u0 com.tencent.mm/.ui.LauncherUI t17}",
    "",
    "  ResumedActivity:ActivityRecord{9b6e52d u0 com.tencent.mm/.ui.LauncherUI t17}",
)

INPUT_METHOD_ANDROID_13 = lines(
    "Current Input Method Manager state:",
    "  mCurMethodId=com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME",
    "  mCurFocusedWindow=Window{c2ab1f3 u0 com.android.settings/com.android.settings.SubSettings}",
    "  mShowRequested=true mShowExplicitlyRequested=false mShowForced=false mInputShown=true",
    "  mInFullscreenMode=false",
)

INPUT_METHOD_ANDROID_14 = lines(
    "Current Input Method Manager state:",
    "  mCurMethodId=com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME",
    " mRequestedShowExplicitly=false mShowForced=false",
    "  mImeHiddenByDisplayPolicy=false",
    "  mInputShown=false",
    " InputMethodService:",
    "  mIsInputViewShown=false",
)


def test_focused_app_from_mcurrentfocus_then_mfocusedapp() -> None:
    assert focused_app(WINDOW_ANDROID_10) == CurrentApp("com.android.settings", "com.android.settings.Settings")
    shade = ("  mCurrentFocus=Window{1a u0 NotificationShade}\n"
             "  mFocusedApp=ActivityRecord{b3a1ec9 u0 com.hq.android.androiddemo/.MainActivity t82}\n")
    assert focused_app(shade) == CurrentApp("com.hq.android.androiddemo", ".MainActivity")
    android10_token = WINDOW_ANDROID_10.replace("mCurrentFocus=Window{2b6d2f8 u0 com.android.settings/com.android"
                                                ".settings.Settings}", "mCurrentFocus=null")
    assert focused_app(android10_token) == CurrentApp("com.android.settings", ".Settings")


def test_focused_app_is_none_where_the_build_prints_no_focus() -> None:
    assert focused_app(WINDOW_ANDROID_14) is None
    assert focused_app("  mCurrentFocus=Window{8d4e6a1 u0 StatusBar}\n  mFocusedApp=null\n") is None
    assert focused_app("") is None


def test_resumed_activity_across_versions() -> None:
    assert resumed_activity(ACTIVITIES_ANDROID_14) == CurrentApp("com.android.settings", ".Settings")
    assert resumed_activity(ACTIVITIES_ANDROID_10) == CurrentApp("com.tencent.mm", ".ui.LauncherUI")
    assert resumed_activity("ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n") is None


def test_keyboard_shown_prefers_the_systems_word() -> None:
    assert keyboard_shown(INPUT_METHOD_ANDROID_13) is True
    assert keyboard_shown(INPUT_METHOD_ANDROID_14) is False
    assert keyboard_shown(INPUT_METHOD_ANDROID_14.replace("mInputShown=false", "mInputShown=true")) is True
    assert keyboard_shown("InputMethodService:\n  mIsInputViewShown=true\n") is True  # no system line
    assert keyboard_shown("Can't find service: input_method\n") is None


def test_ime_frame_from_old_and_new_frame_lines() -> None:
    assert ime_frame(WINDOW_ANDROID_10) == (0, 1321, 1080, 2280)
    assert ime_frame(WINDOW_ANDROID_14) == (0, 1517, 1080, 2400)


def test_ime_frame_below_the_content_insets_of_a_tall_window() -> None:
    assert ime_frame(WINDOW_TALL_IME) == (0, 128 + 1389, 1080, 2400)


def test_no_ime_frame_while_its_window_is_hidden_or_absent() -> None:
    hidden = WINDOW_ANDROID_10.replace("mViewVisibility=0x0 mHaveFrame=true mObscured=false\n    mFrame",
                                       "mViewVisibility=0x8 mHaveFrame=true mObscured=false\n    mFrame")
    assert ime_frame(hidden) is None
    assert ime_frame(WINDOW_TALL_IME.replace("isOnScreen=true", "isOnScreen=false")) is None
    assert ime_frame(WINDOW_ANDROID_14.replace("u0 InputMethod}", "u0 PopupWindow:3e5f1a2}")) is None
    assert ime_frame("") is None


def test_window_packages_top_most_first() -> None:
    assert window_packages(WINDOW_ANDROID_14) == [
        "com.android.systemui", "com.google.android.inputmethod.latin", "com.google.android.permissioncontroller",
        "com.saucelabs.mydemoapp.android"]
    assert window_packages(WINDOW_ANDROID_10) == ["com.baidu.input_yijia", "com.android.systemui",
                                                  "com.android.settings"]
    assert window_packages("no windows here") == []
