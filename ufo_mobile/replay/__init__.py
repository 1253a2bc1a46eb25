"""Guarded replay: a run's trajectory followed again without a model, checked screen by screen,
and the run cache that keeps finished runs' trajectories for the next run of the same task.

- ``trajectory``: what a run did (``load_trajectory``);
- ``similarity``: how alike two screens are, and which control is which;
- ``guard``: the check before each step and the action adapted to the current screen;
- ``plan``: what a session replays (``ReplayPlan``) and how far it got (``ReplayProgress``);
- ``cache``: the run cache (``RunCache``, ``cache_key``).

The replay agent and its phases (``ufo_mobile.core.agents.replay``, ``ufo_mobile.core.processors.replay``)
run the steps; the session looks the cache up and saves to it.
"""

from ufo_mobile.replay.cache import RunCache, cache_key, not_cacheable
from ufo_mobile.replay.guard import Verdict, check
from ufo_mobile.replay.plan import NoModel, ReplayPlan, ReplayProgress
from ufo_mobile.replay.similarity import Comparison, compare
from ufo_mobile.replay.trajectory import Trajectory, TrajectoryStep, load_trajectory

__all__ = [
    "Comparison",
    "NoModel",
    "ReplayPlan",
    "ReplayProgress",
    "RunCache",
    "Trajectory",
    "TrajectoryStep",
    "Verdict",
    "cache_key",
    "check",
    "compare",
    "load_trajectory",
    "not_cacheable",
]
