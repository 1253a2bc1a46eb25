"""Batch runs over a pool of phones: ``python -m ufo_mobile batch``.

- ``devices``: ``--devices`` specs, resolving them against adb servers, probing a phone;
- ``pool``: free, busy and lost phones;
- ``jobs``: the job model both engines share (``Task``, ``Job``, ``Outcome``, ``Event``);
- ``runner``: one job on one phone, as a ``Session`` (``run_job``);
- ``scheduler``: the batch loop and the retry of a task whose phone was lost (``Batch``);
- ``local`` and ``ray_engine``: the engines (asyncio in this process; Ray tasks placed by the
  ``phone:<name>`` resource), ``archive``: a run directory sent back from a Ray worker;
- ``progress``: the live table or plain lines; ``results``: ``batch.jsonl``, ``batch.html``, the summary;
- ``batch``: all of it put together for the command line; ``resources``: a node's phones as Ray resources.
"""

from ufo_mobile.fleet.devices import Phone, parse_devices
from ufo_mobile.fleet.jobs import Event, Job, Outcome, Task
from ufo_mobile.fleet.pool import Pool
from ufo_mobile.fleet.runner import run_job
from ufo_mobile.fleet.scheduler import Batch, TaskResult

__all__ = ["Batch", "Event", "Job", "Outcome", "Phone", "Pool", "Task", "TaskResult", "parse_devices", "run_job"]
