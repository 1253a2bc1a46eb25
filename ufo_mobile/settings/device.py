"""The ``device:`` and ``perception:`` sections: which phone is driven, and how its screen is read."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from ufo_mobile.settings.strict import Strict


class SimSettings(Strict):
    """``device.sim``: the simulated phone's screen and apps."""

    width: int = Field(default=1080, gt=0, description="screen width in pixels")
    height: int = Field(default=2400, gt=0, description="screen height in pixels")
    apps: list[Path] = Field(default_factory=list, description="extra app YAML files to install")
    install: list[str] = Field(default_factory=list,
                               description="shipped apps that are not preinstalled, by package (com.example.shop)")
    start_app: str | None = Field(default=None, description="the app in front when the run starts (a package); "
                                                            "None = the home screen")


class DeviceSettings(Strict):
    """The ``device:`` section: the phone a run drives and how it is reached (``kind`` defaults to
    ``sim``, the built-in simulated phone)."""

    kind: Literal["sim", "adb", "u2", "wda"] = Field(default="sim", description="sim (the built-in simulated "
                                                     "phone), adb (over an adb server), u2 (uiautomator2) or wda "
                                                     "(an iPhone's WebDriverAgent)")
    serial: str | None = Field(default=None, description="adb serial (or host:port), or for kind wda the "
                                                         "WebDriverAgent's URL (http://127.0.0.1:8100); None = the "
                                                         "only device")
    choose: Literal["ask", "phone", "sim"] = Field(
        default="ask", description="when nothing you wrote names the device and one phone is on the adb server: "
                                   "ask (at a terminal; elsewhere the simulated phone, with a note), phone (use "
                                   "it) or sim (the simulated phone, no note)")
    adb_host: str = Field(default="127.0.0.1", description="the adb server's host")
    adb_port: int | None = Field(default=None, description="adb server port; None = $ANDROID_ADB_SERVER_PORT or 5037")
    command_timeout_seconds: float = Field(default=20.0, gt=0, description="bound on every device call")
    u2_start_timeout_seconds: float = Field(default=40.0, gt=0, description="how long the uiautomator2 server "
                                                                            "may take to start")
    u2_fallback: bool = Field(default=True, description="u2: continue with plain adb when its server cannot start")
    label_cache_dir: str | None = Field(default="~/.cache/ufo_mobile/labels",
                                        description="labels read from APKs, per device and version; None = memory")
    display_id: str | None = Field(default=None, description="screencap -d on multi-display phones; None = the first")
    record_actions: bool = Field(default=True, description="write every action to <run>/actions.jsonl")
    stealth: bool = Field(default=False, description="human-like timing, tap points, swipes and typing")
    stealth_seed: int | None = Field(default=None, description="seed for the stealth randomness; None = a fresh "
                                                               "one per run")
    wda_apps: dict[str, str] = Field(default_factory=dict, description="kind wda: the apps to offer beside "
                                     "Apple's own, by the name on the home screen ({Shop: com.example.shop}); "
                                     "WebDriverAgent cannot list them")
    sim: SimSettings = Field(default=SimSettings(), description="the simulated phone (kind: sim)")


class PerceptionSettings(Strict):
    """The ``perception:`` section: how the screen is read and what the model is sent of it."""

    control_cache_ttl_seconds: float = Field(default=5.0, ge=0, description="parsed controls are reused this "
                                                                            "long unless an action ran")
    image_longest_side: int = Field(default=1280, ge=64, description="the model's screenshot at most this long")
    image_max_tiles: int = Field(default=3, ge=0, description="and at most this many 512 px tiles (0: no limit)")
    image_detail: Literal["low", "high", "auto"] = Field(default="high", description="the image detail sent "
                                                                                     "with the screenshot")
    send_clean_screenshot: bool = Field(default=False, description="also send the screenshot without numbers")
    dump_retries: int = Field(default=2, ge=0, description="re-reads of an invalid UI dump before failing")
    dump_refused_retries: int = Field(default=3, ge=0, description="a dump the phone refuses: tries again")
    dump_retry_delay_seconds: float = Field(default=0.5, gt=0, description="the first pause; it doubles")
    annotate: bool = Field(default=True, description="draw numbered boxes on the screenshot (set-of-mark)")
    source: Literal["both", "screenshot", "dump"] = Field(
        default="both", description="both: the UI dump and the screenshot; screenshot: the screenshot alone, "
                                    "no dump read (games, Flutter or WebView screens): the model acts by "
                                    "coordinates; dump: the UI dump alone, no screenshot taken (a text-only "
                                    "model, or screens that must not be captured)")
    settle_timeout_seconds: float = Field(default=3.0, ge=0, description="0 turns the stability check off")
    settle_interval_seconds: float = Field(default=0.3, ge=0, description="pause between observations while "
                                                                          "the screen still moves")
