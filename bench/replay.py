"""Replay benchmark: the demo run by the agent, then done again without a model, as a guarded replay of
its run directory and through the run cache, with the time and the model calls of each as ratios to
the original's, measured in the same run.

    python bench/replay.py [--repeat N] [--model-latency SECONDS]

Each repeat uses fresh simulated phones and a fresh log directory and cache:

- original: ``run demo`` with its scripted model (4 model calls);
- replay: ``replay RUN_DIR`` of that run (every screen checked, no model);
- cache, first: the same task with ``replay.cache_dir`` set: a miss, run by the agent, then saved;
- cache, hit: the same task again: replayed from the cache.

Times are medians over ``--repeat`` runs of the whole ``Session.run`` (wall clock), in one process.
The scripted model answers at once, so the time ratio understates what a replay saves with a real
model, whose every call takes seconds: ``--model-latency 1.5`` delays each scripted reply (the
script's ``delay_seconds``) to show that. What the replay still pays for is the observation of each
step (screenshot, UI dump, settle check), which a replay needs to check the screen.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ufo_mobile.core.device.sim import SimDriver  # noqa: E402
from ufo_mobile.core.session import RunResult, Session  # noqa: E402
from ufo_mobile.core.trace import runs  # noqa: E402
from ufo_mobile.replay import NoModel, ReplayPlan, load_trajectory  # noqa: E402
from ufo_mobile.settings import Settings, load_settings, settings_of_run  # noqa: E402
from ufo_mobile.shipped import CONFIG_DIR

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
SCRIPT = CONFIG_DIR / "tasks" / "scripts" / "demo_wifi.yaml"
KINDS = ("original", "replay", "cache, first", "cache, hit")


def demo_settings(folder: Path, latency: float, cache: Path | None = None) -> Settings:
    script = folder / "script.yaml"
    if not script.exists():
        data = yaml.safe_load(SCRIPT.read_text(encoding="utf-8"))
        script.write_text(yaml.safe_dump({**data, "delay_seconds": latency}), encoding="utf-8")
    overrides: dict[str, Any] = {"logs": {"dir": str(folder / "logs")}, "model": {"script": str(script)}}
    if cache is not None:
        overrides["replay"] = {"cache_dir": str(cache)}
    return load_settings(DEMO, overrides=overrides, env={})


async def timed(run: Callable[[], Awaitable[RunResult]]) -> tuple[float, RunResult]:
    started = time.perf_counter()
    result = await run()
    elapsed = time.perf_counter() - started
    if result.status != "FINISH":
        raise SystemExit(f"a benchmark run failed: {result.reason} ({result.run_dir})")
    return elapsed, result


async def one_round(folder: Path, latency: float) -> dict[str, tuple[float, int]]:
    """Each kind of run once: seconds and model calls."""
    out: dict[str, tuple[float, int]] = {}
    settings = demo_settings(folder, latency)
    seconds, original = await timed(lambda: Session(settings, device=SimDriver()).run())
    out["original"] = (seconds, original.model_calls)
    trajectory = load_trajectory(original.run_dir)
    again = settings_of_run(runs.read_run(original.run_dir))
    plan = ReplayPlan(trajectory, fallback="stop", source=f"run {trajectory.run_id}")
    seconds, replayed = await timed(lambda: Session(again, device=SimDriver(), model=NoModel(), replay=plan).run())
    out["replay"] = (seconds, replayed.model_calls)
    cached = demo_settings(folder, latency, cache=folder / "cache")
    seconds, first = await timed(lambda: Session(cached, device=SimDriver()).run())
    out["cache, first"] = (seconds, first.model_calls)
    seconds, hit = await timed(lambda: Session(cached, device=SimDriver()).run())
    if hit.replay is None or hit.replay["ended"] != "finished":
        raise SystemExit(f"the cached run did not replay: {hit.run_cache}")
    out["cache, hit"] = (seconds, hit.model_calls)
    return out


def print_table(rounds: list[dict[str, tuple[float, int]]], latency: float) -> None:
    median = {k: statistics.median(r[k][0] for r in rounds) for k in KINDS}
    calls = {k: statistics.median(r[k][1] for r in rounds) for k in KINDS}
    base_s, base_calls = median["original"], calls["original"]
    print(f"\ndemo (turn on Wi-Fi), {len(rounds)} repeats, model latency {latency:g} s per call")
    print(f"{'run':<14}{'median s':>10}{'model calls':>13}{'time ratio':>12}{'calls ratio':>13}")
    for kind in KINDS:
        ratio = calls[kind] / base_calls if base_calls else 0.0
        print(f"{kind:<14}{median[kind]:>10.3f}{calls[kind]:>13g}{median[kind] / base_s:>12.2f}{ratio:>13.2f}")
    print(f"\nreplay: {median['replay'] / base_s:.2f}x the original's time with {calls['replay']:g} of its "
          f"{base_calls:g} model calls; a cache hit: {median['cache, hit'] / base_s:.2f}x")


def main(argv: list[str] | None = None) -> int:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the four runs (medians)")
    parser.add_argument("--model-latency", type=float, default=0.0, metavar="SECONDS",
                        help="delay every scripted reply by this much, as a real model would take (default 0)")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.model_latency < 0:
        parser.error("--repeat must be at least 1 and --model-latency at least 0")
    started = time.perf_counter()
    rounds = []
    for n in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="bench-replay-") as folder:
            rounds.append(asyncio.run(one_round(Path(folder), args.model_latency)))
        print(f"  round {n + 1} of {args.repeat} done", file=sys.stderr)
    print_table(rounds, args.model_latency)
    print(f"\nbench took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
