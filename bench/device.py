"""Device benchmark: per-call latency of each driver against the emulated adbd, the observe time
with the screenshot and the UI dump taken concurrently vs one after the other, and what a realistic
phone costs the observation phase.

    python bench/device.py [--repeat N] [--tours N] [--part latency|realism|all]

Starts the simulated phone behind the emulated adbd and a private real adb server (the binary in
the adbutils wheel) on 127.0.0.1, measures SimDriver (in process), AdbDriver (adbutils) and
U2Driver (uiautomator2 JSON-RPC), prints medians in milliseconds, and stops everything. Timings
are medians of N runs in one process; they describe this loopback set-up, not a real phone.

Realism: the same tour of screens (the launcher, Settings right after it opens, a focused text
field under the soft keyboard, a playing video, the same video after a tap, a bank's secure
login, home again) is observed through the real observation phase (``DataCollection`` with the
default ``perception`` settings: refused dumps tried again after 0.5 s, 1 s, 2 s, then the
fallbacks) on the ``kind`` phone (the baseline) and on ``pixel-14``, for each driver, the two
phones' tours taken in turn. It prints the share of observations that needed a retry or a
fallback, the ``uiautomator dump`` commands and all the shell commands the phone ran per
observation, and the cost of an observation on the realistic phone as a ratio to the kind phone
measured in the same run (the mean over the stops of each stop's median over the tours; goal: at
most 1.5x, issue 25), then per stop: each phone's median, the ratio, the milliseconds pixel-14
adds, the shell commands each phone ran (kind/pixel-14, last tour) and what pixel-14 needed.
The emulated phone refuses at once where a real one first waits up to 10 s for an idle screen
(AOSP DumpCommand), so real phones pay more per refusal, and more for every ``uiautomator dump``
they run.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adb_server import PrivateAdbServer  # noqa: E402
from tests.flows import focus_new_note_title  # noqa: E402
from ufo_mobile.core.device.adb import AdbDriver  # noqa: E402
from ufo_mobile.core.device.adb_base import AdbServerClient  # noqa: E402
from ufo_mobile.core.device.base import DeviceDriver  # noqa: E402
from ufo_mobile.core.device.sim import SimDriver  # noqa: E402
from ufo_mobile.core.device.u2 import U2Driver  # noqa: E402
from ufo_mobile.core.memory.state import SharedState  # noqa: E402
from ufo_mobile.core.phone import Phone  # noqa: E402
from ufo_mobile.core.processors.context import Observation, StepContext  # noqa: E402
from ufo_mobile.core.processors.data_collection import DataCollection  # noqa: E402
from ufo_mobile.core.ui.provider import AndroidStateProvider  # noqa: E402
from ufo_mobile.settings import PerceptionSettings  # noqa: E402
from ufo_mobile.sim.android.profile import OPTIONAL_APPS  # noqa: E402
from ufo_mobile.sim.phone.loader import packaged_app  # noqa: E402
from ufo_mobile.sim.phone.simphone import SimPhone  # noqa: E402
from ufo_mobile.sim.servers.adb.daemon import EmulatedAdbd  # noqa: E402

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


def product_client(server: PrivateAdbServer) -> AdbServerClient:
    """A client of the private adb server as the product makes one (``device/factory.py``)."""
    return AdbServerClient(host="127.0.0.1", port=server.port, socket_timeout=30.0)


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
        client = product_client(server)
        try:
            client.connect(adbd.address, timeout=10)
            client.wait_for(adbd.address, state="device", timeout=10)
            rows["adb"] = await measure("adb", AdbDriver(adbd.address, client=client), repeat)
            rows["u2"] = await measure("u2", U2Driver(adbd.address, client=client), repeat)
        finally:
            client.disconnect(adbd.address)
            runner.stop()
    return rows


# --- realism: the observation phase on a realistic phone vs the kind one ----------------------

TOUR: list[tuple[str, Callable[[DeviceDriver], Awaitable[Any]]]] = [
    ("launcher", lambda d: d.press_key("home")),
    ("settings, just opened", lambda d: d.start_app("com.android.settings")),
    ("note field + keyboard", focus_new_note_title),
    ("playing video", lambda d: d.start_app("com.example.video")),
    ("video after a tap", lambda d: d.tap(540, 40)),  # the status bar: the video plays on
    ("secure bank login", lambda d: d.start_app("com.example.bank", ".LoginActivity")),
    ("launcher again", lambda d: d.press_key("home")),
]


REALISM_GOAL = 1.5  # observation on pixel-14 / on the kind phone (issue 25)


@dataclass
class Observed:
    stop: str
    ms: float
    refusals: list[str]
    fallback: str | None
    blocked: bool
    dumps: int  # ``uiautomator dump`` commands the phone ran for it
    commands: int  # shell commands the phone ran for it (adb: every one is a round trip)

    @property
    def needed_help(self) -> bool:
        return bool(self.refusals) or self.fallback is not None


@dataclass
class Tour:
    observations: list[Observed] = field(default_factory=list)
    slept: float = 0.0  # seconds of backoff pauses
    apps_ms: float = 0.0  # the first listing of the launchable apps (labels read from APKs)
    apps: int = 0

    def mean_ms(self) -> float:
        return statistics.fmean(o.ms for o in self.observations)

    def stops(self) -> dict[str, list[Observed]]:
        found: dict[str, list[Observed]] = {}
        for obs in self.observations:
            found.setdefault(obs.stop, []).append(obs)
        return found

    def stop_ms(self) -> dict[str, float]:
        """Each stop's median over the tours."""
        return {stop: statistics.median(o.ms for o in seen) for stop, seen in self.stops().items()}

    def typical_ms(self) -> float:
        """The mean over the stops of each stop's median over the tours (steadier than the mean)."""
        return statistics.fmean(self.stop_ms().values())

    def dumps_per_observation(self) -> float:
        return statistics.fmean(o.dumps for o in self.observations)

    def commands_per_observation(self) -> float:
        return statistics.fmean(o.commands for o in self.observations)

    def share_helped(self) -> float:
        return sum(o.needed_help for o in self.observations) / len(self.observations)


class Touring:
    """One phone and one driver going round ``TOUR`` through the observation phase."""

    def __init__(self, driver: DeviceDriver, adbd: EmulatedAdbd) -> None:
        self.driver, self.adbd, self.result, self.step = driver, adbd, Tour(), 0
        settings = PerceptionSettings(control_cache_ttl_seconds=0, settle_timeout_seconds=0)

        async def sleep(seconds: float) -> None:
            self.result.slept += seconds
            await asyncio.sleep(seconds)

        provider = AndroidStateProvider(driver, unavailable_retries=settings.dump_refused_retries,
                                        retry_delay=settings.dump_retry_delay_seconds, sleep=sleep)
        self.phase = DataCollection(Phone(driver, provider=provider, cache_ttl=0), settings)

    async def start(self) -> None:
        await self.driver.connect()
        started = time.perf_counter()  # once per run, before the first observation (labels then cached)
        self.result.apps = len(await self.driver.get_apps())
        self.result.apps_ms = (time.perf_counter() - started) * 1000

    async def once(self) -> None:
        """Observe every stop of ``TOUR`` once."""
        for stop, act in TOUR:
            await act(self.driver)
            self.step += 1
            ctx = StepContext(run_id="bench", step=self.step, agent_name="bench", request="tour",
                              shared=SharedState())
            self.adbd.commands.clear()
            started = time.perf_counter()
            await self.phase.run(ctx)
            elapsed = (time.perf_counter() - started) * 1000
            commands = list(self.adbd.commands)
            obs = ctx.observation
            assert isinstance(obs, Observation)
            self.result.observations.append(Observed(
                stop, elapsed, obs.dump_refusals, obs.fallback, obs.screenshot_blocked,
                sum("uiautomator dump" in command for command in commands), len(commands)))


def _phone() -> SimPhone:
    phone = SimPhone()
    for package in OPTIONAL_APPS:
        if package not in {app.package for app in phone.installed_apps()}:
            phone.install(packaged_app(package))
    return phone


async def realism(tours: int) -> dict[tuple[str, str], Tour]:
    """For each driver: the kind phone and pixel-14 side by side, their tours taken in turn (the
    machine's load then weighs on both alike)."""
    found: dict[tuple[str, str], Tour] = {}
    with PrivateAdbServer() as server:
        client = product_client(server)
        for kind in ("adb", "u2"):
            touring: dict[str, Touring] = {}
            runners = []
            try:
                for profile in ("kind", "pixel-14"):
                    adbd = EmulatedAdbd(_phone(), profile=profile)
                    runners.append((adbd, adbd.run_in_thread()))
                    client.connect(adbd.address, timeout=10)
                    client.wait_for(adbd.address, state="device", timeout=10)
                    driver: DeviceDriver = (AdbDriver(adbd.address, client=client) if kind == "adb"
                                            else U2Driver(adbd.address, client=client, fallback=False))
                    touring[profile] = Touring(driver, adbd)
                    await touring[profile].start()
                for _ in range(tours):
                    for going in touring.values():
                        await going.once()
            finally:
                for going in touring.values():
                    await going.driver.close()
                for adbd, runner in runners:
                    client.disconnect(adbd.address)
                    runner.stop()
            for profile, going in touring.items():
                found[(profile, kind)] = going.result
            print(f"  toured both phones with {kind}", file=sys.stderr)
    return found


def print_realism(found: dict[tuple[str, str], Tour]) -> None:
    print(f"\n{'observation phase':<22}{'driver':>7}{'observations':>14}{'retry/fallback':>16}"
          f"{'dumps/obs':>11}{'cmds/obs':>10}{'mean ms':>10}{'median ms':>11}{'backoff s':>11}")
    for (profile, kind), result in found.items():
        print(f"{profile:<22}{kind:>7}{len(result.observations):>14}{result.share_helped():>15.0%}"
              f"{result.dumps_per_observation():>11.2f}{result.commands_per_observation():>10.2f}"
              f"{result.mean_ms():>10.1f}{result.typical_ms():>11.1f}{result.slept:>11.1f}")
    for kind in ("adb", "u2"):
        plain, real = found[("kind", kind)], found[("pixel-14", kind)]
        ratio = real.typical_ms() / plain.typical_ms()
        print(f"{kind}: observation on pixel-14 is {ratio:.2f}x the kind phone's "
              f"(goal <= {REALISM_GOAL}x: {'met' if ratio <= REALISM_GOAL else 'not met'}); a retry or fallback in "
              f"{real.share_helped():.0%} of observations, {real.dumps_per_observation():.2f} uiautomator dumps and "
              f"{real.commands_per_observation():.2f} shell commands each (kind phone: "
              f"{plain.dumps_per_observation():.2f} and {plain.commands_per_observation():.2f}); listing its "
              f"{real.apps} launchable apps with their APKs' labels took {real.apps_ms:.0f} ms once ({plain.apps} "
              f"apps on the kind phone: {plain.apps_ms:.0f} ms)")
        print_stops(plain, real)


def print_stops(plain: Tour, real: Tour) -> None:
    """Per stop: the median on each phone, the ratio, the commands each ran, and what pixel-14 needed."""
    print(f"    {'stop (median ms)':<24}{'kind':>9}{'pixel-14':>10}{'ratio':>7}{'extra':>10}{'cmds':>9}  on pixel-14")
    kind_ms, real_ms = plain.stop_ms(), real.stop_ms()
    for stop, seen in real.stops().items():
        last = seen[-1]  # the last tour's: what every tour after the first does
        how = ", ".join(filter(None, [
            f"refused {'+'.join(last.refusals)}" if last.refusals else "",
            f"fallback {last.fallback}" if last.fallback else "",
            "secure screen (no image sent)" if last.blocked else ""])) or "plain"
        cmds = f"{plain.stops()[stop][-1].commands}/{last.commands}"
        print(f"    {stop:<24}{kind_ms[stop]:>9.1f}{real_ms[stop]:>10.1f}{real_ms[stop] / kind_ms[stop]:>6.2f}x"
              f"{real_ms[stop] - kind_ms[stop]:>10.1f}{cmds:>9}  {last.dumps} dumps, {how}")


def main(argv: list[str] | None = None) -> int:
    # the observation phase warns on every refusal and fallback: the table says it all
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=15, help="runs per call (median)")
    parser.add_argument("--tours", type=int, default=7, help="tours of the screens per phone and driver (realism)")
    parser.add_argument("--part", choices=["latency", "realism", "all"], default="all")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.part in ("latency", "all"):
        print_table(asyncio.run(run(args.repeat)))
    if args.part in ("realism", "all"):
        print_realism(asyncio.run(realism(args.tours)))
    print(f"\nbench took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
