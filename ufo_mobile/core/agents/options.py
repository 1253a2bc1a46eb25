"""What every agent of a run is made with besides its phone, model and settings.

``AgentOptions`` groups the run-wide choices an agent does not decide itself: the logger its
phases write to, the step timer (tests pass one they fire themselves), the person in the loop
(``core/agents/human.py``; None: nobody can take over or approve) and the middleware around each
phase (``core/processors/base.py``). The factory (``core/agents/factory.py``) makes one per run,
and every agent of the run gets the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ufo_mobile.core.agents.human import Operator
from ufo_mobile.core.agents.limits import StepTimer, event_loop_timer
from ufo_mobile.core.processors.base import Middleware


@dataclass(frozen=True)
class AgentOptions:
    """The run-wide choices every agent of a run is made with (see the module docstring)."""

    logger: Any = None
    step_timer: StepTimer = event_loop_timer
    operator: Operator | None = None
    middleware: tuple[Middleware, ...] = ()


#: no logger of the run's, the event loop's timer, nobody in the loop, no middleware
DEFAULT_OPTIONS = AgentOptions()
