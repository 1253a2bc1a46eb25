"""Session and Round: the one generic loop ``handle -> next_state -> next_agent``.

A ``Round`` (``loop.py``) drives whichever agent is current until its state ends the round. A
``Session`` (``session.py``) has its parts built (``ufo_mobile.core.builder``: the model and the device
from ``Settings``; a bad file is a ``ConfigError`` before anything is written), opens the run
directory (``ufo_mobile/core/builder/start.py``), runs one round, and returns a ``RunResult`` (``result.py``).

However the run ends, ``run.json`` ends in a final state with a reason:

- FINISH or FAIL from the agent (limits, device and model failures included);
- a signal (Ctrl-C, SIGTERM, SIGHUP; ``signals.py``): the running step is cancelled and recorded,
  and the run ends in FAIL("interrupted" | "terminated" | "hung up"); a second signal stops waiting
  for anything (the device, the final screenshot) and records the same; a third one kills at once;
- a write failure (a full disk): FAIL("cannot write the run directory: ..."), nothing half-written;
- a crash: FAIL("internal error: ...") and the exception is raised on;
- SIGKILL: nothing can be written then, but the run's lock dies with the process, and the next
  ``run`` in the same log directory (or ``report`` of the run) marks it as cut off.

A session may replay a trajectory first (``replay``: ``python -m ufo_mobile replay RUN_DIR``), and
with ``replay.cache_dir`` set it looks the task up in the run cache before the run (a hit is
replayed, falling back to the agent) and saves the run's trajectory there when it finished;
``RunResult.replay`` and ``RunResult.run_cache`` say what happened.
"""

from ufo_mobile.core.builder.parts import Models, RunParts
from ufo_mobile.core.builder.start import Resumed
from ufo_mobile.core.session.loop import Round, connect_device
from ufo_mobile.core.session.result import RunResult
from ufo_mobile.core.session.session import LiveRun, Session
from ufo_mobile.core.session.signals import STOP_SIGNALS, RunControl, RunGroup, install_stop_signals

__all__ = ["STOP_SIGNALS", "LiveRun", "Models", "Resumed", "Round", "RunControl", "RunGroup", "RunParts",
           "RunResult", "Session", "connect_device", "install_stop_signals"]
