"""The ``device:`` and ``perception:`` sections: which phone is driven, and how its screen is read."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from ufo_mobile.settings.strict import Strict


class SimSettings(Strict):
    width: int = Field(default=1080, gt=0)
    height: int = Field(default=2400, gt=0)
    apps: list[Path] = Field(default_factory=list, description="extra app YAML files to install")
    install: list[str] = Field(default_factory=list,
                               description="shipped apps that are not preinstalled, by package (com.example.shop)")
    start_app: str | None = None


class DeviceSettings(Strict):
    kind: Literal["sim", "adb", "u2"] = "sim"
    serial: str | None = Field(default=None, description="adb serial (or host:port); None = the only device")
    choose: Literal["ask", "phone", "sim"] = Field(
        default="ask", description="when nothing you wrote names the device and one phone is on the adb server: "
                                   "ask (at a terminal; elsewhere the simulated phone, with a note), phone (use "
                                   "it) or sim (the simulated phone, no note)")
    adb_host: str = "127.0.0.1"
    adb_port: int | None = Field(default=None, description="adb server port; None = $ANDROID_ADB_SERVER_PORT or 5037")
    command_timeout_seconds: float = Field(default=20.0, gt=0)
    u2_start_timeout_seconds: float = Field(default=40.0, gt=0)
    u2_fallback: bool = True
    label_cache_dir: str | None = Field(default="~/.cache/ufo_mobile/labels",
                                        description="labels read from APKs, per device and version; None = memory")
    display_id: str | None = Field(default=None, description="screencap -d on multi-display phones; None = the first")
    record_actions: bool = Field(default=True, description="write every action to <run>/actions.jsonl")
    stealth: bool = Field(default=False, description="human-like timing, tap points, swipes and typing")
    stealth_seed: int | None = None
    sim: SimSettings = SimSettings()


class PerceptionSettings(Strict):
    control_cache_ttl_seconds: float = Field(default=5.0, ge=0)
    image_longest_side: int = Field(default=1280, ge=64, description="the model's screenshot at most this long")
    image_max_tiles: int = Field(default=3, ge=0, description="and at most this many 512 px tiles (0: no limit)")
    image_detail: Literal["low", "high", "auto"] = "high"
    send_clean_screenshot: bool = Field(default=False, description="also send the screenshot without numbers")
    dump_retries: int = Field(default=2, ge=0)
    dump_refused_retries: int = Field(default=3, ge=0, description="a dump the phone refuses: tries again")
    dump_retry_delay_seconds: float = Field(default=0.5, gt=0, description="the first pause; it doubles")
    annotate: bool = True
    settle_timeout_seconds: float = Field(default=3.0, ge=0, description="0 turns the stability check off")
    settle_interval_seconds: float = Field(default=0.3, ge=0)
