"""Device benchmark: per-call latency of each driver against the emulated adbd, and the observe time
with the screenshot and the UI dump taken concurrently vs one after the other.

    python bench/device.py [--repeat N]

Starts the simulated phone behind the emulated adbd and a private real adb server (the binary in
the adbutils wheel) on 127.0.0.1, measures SimDriver (in process), AdbDriver (adbutils) and
U2Driver (uiautomator2 JSON-RPC), prints medians in milliseconds, and stops everything. Timings
are medians of N runs in one process; they describe this loopback set-up, not a real phone.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ufo_mobile.device.adb import AdbDriver  # noqa: E402
from ufo_mobile.device.base import DeviceDriver  # noqa: E402
from ufo_mobile.device.sim import SimDriver  # noqa: E402
from ufo_mobile.device.u2 import U2Driver  # noqa: E402
from ufo_mobile.sim.adb_server import PrivateAdbServer  # noqa: E402
from ufo_mobile.sim.adbd import EmulatedAdbd  # noqa: E402
from ufo_mobile.sim.flows import focus_new_note_title  # noqa: E402
from ufo_mobile.sim.phone import SimPhone  # noqa: E402

CALLS: list[tuple[str, Callable[[DeviceDriver], Awaitable[Any]]]] = [
    ("screenshot", lambda d: d.screenshot()),
    ("get_ui_tree", lambda d: d.get_ui_tree()),
    ("tap", lambda d: d.tap(540, 40)),  # the status bar: taps there change nothing
    ("swipe", lambda d: d.swipe(540, 1500, 540, 1400, 50)),
    ("press_key", lambda d: d.press_key("home")),
    ("current_app", lambda d: d.current_app()),
    ("screen_size", lambda d: d.screen_size()),
    ("input_text", lambda d: d.input_text("hello world", clear=True)),
]


async def median_ms(call: Callable[[], Awaitable[Any]], repeat: int) -> float:
    await call()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def measure(name: str, driver: DeviceDriver, repeat: int) -> dict[str, float]:
    await driver.connect()
    row: dict[str, float] = {}
    for call_name, call in CALLS:
        if call_name == "input_text":
            await focus_new_note_title(driver)
        row[call_name] = await median_ms(lambda c=call: c(driver), repeat)  # type: ignore[misc]
    row["observe sequential"] = await median_ms(lambda: _sequential(driver), repeat)
    row["observe concurrent"] = await median_ms(lambda: _concurrent(driver), repeat)
    await driver.press_key("home")
    print(f"  measured {name}", file=sys.stderr)
    return row


async def _sequential(driver: DeviceDriver) -> None:
    await driver.screenshot()
    await driver.get_ui_tree()


async def _concurrent(driver: DeviceDriver) -> None:
    await asyncio.gather(driver.screenshot(), driver.get_ui_tree())


def print_table(rows: dict[str, dict[str, float]]) -> None:
    names = list(rows)
    calls = list(next(iter(rows.values())))
    print(f"{'call (median ms)':<20}" + "".join(f"{n:>12}" for n in names))
    for call in calls:
        print(f"{call:<20}" + "".join(f"{rows[n][call]:>12.1f}" for n in names))
    for n in names:
        seq, con = rows[n]["observe sequential"], rows[n]["observe concurrent"]
        print(f"{n}: concurrent observe is {seq / con:.2f}x the speed of sequential ({con:.1f} vs {seq:.1f} ms)")


async def run(repeat: int) -> dict[str, dict[str, float]]:
    rows = {"sim": await measure("sim", SimDriver(), repeat)}
    with PrivateAdbServer() as server:
        adbd = EmulatedAdbd(SimPhone())
        runner = adbd.run_in_thread()
        client = server.client()
        try:
            client.connect(adbd.address, timeout=10)
            client.wait_for(adbd.address, state="device", timeout=10)
            rows["adb"] = await measure("adb", AdbDriver(adbd.address, client=client), repeat)
            rows["u2"] = await measure("u2", U2Driver(adbd.address, client=client), repeat)
        finally:
            client.disconnect(adbd.address)
            runner.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=15, help="runs per call (median)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = asyncio.run(run(args.repeat))
    print_table(rows)
    print(f"\nbench took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
