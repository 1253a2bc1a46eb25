"""The two ways to run model-written Python: ``run_codeact`` (calls the tools) and ``run_script``.

Both check the code first (a refusal starts nothing), run it in a sandbox process of its own (see
``process.py``) and return a ``CodeRun``; neither raises for anything the code does. They raise
``SandboxError`` when no sandbox can be started, ``ValueError`` for a bad tool name, and whatever
the ``ToolCaller`` raises besides ``ToolError``.
"""

from __future__ import annotations

import keyword
import time
from collections.abc import Sequence
from typing import Any

from ufo_mobile.core.sandbox.bridge import Conversation, Outcome, ToolCaller
from ufo_mobile.core.sandbox.isolation import ISOLATED, Confinement, namespace_problem
from ufo_mobile.core.sandbox.limits import SandboxLimits
from ufo_mobile.core.sandbox.policy import check_code, too_long
from ufo_mobile.core.sandbox.process import MAX_MESSAGE_BYTES, SandboxProcess, sandbox_process
from ufo_mobile.core.sandbox.result import CodeRun

DEFAULT_LIMITS = SandboxLimits()


async def run_codeact(code: str, tools: Sequence[str], call_tool: ToolCaller,
                      limits: SandboxLimits = DEFAULT_LIMITS, confinement: Confinement | None = None) -> CodeRun:
    """Run CodeAct ``code``: the policy's subset of Python, with one function per name in ``tools``.

    Each call of a tool function is ``await call_tool(name, args, kwargs)`` in this process; the
    code sees its result, or a ``ToolError`` it raised, and a returned ``Stop`` ends the code.
    Installed packages are out of reach (``-S``), and so is everything else: no imports, no files.
    """
    started = time.perf_counter()
    for name in tools:
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ValueError(f"not a usable tool name: {name!r}")
    refused = check_code(code, tools=tools, max_chars=limits.max_code_chars)
    if refused is not None:
        return CodeRun(refused=refused, duration_seconds=time.perf_counter() - started)
    confinement = confinement or codeact_confinement()
    job = _job("codeact", code, limits, confinement, tools=list(tools))
    async with sandbox_process(site=False, output_limit=limits.max_output_chars, confinement=confinement,
                               tree=_tree(limits)) as process:
        outcome = await Conversation(process, limits, tools=tools, call_tool=call_tool).run(job, close_input=False)
    return _record(outcome, process, started)


async def run_script(code: str, limits: SandboxLimits = DEFAULT_LIMITS,
                     confinement: Confinement = ISOLATED) -> CodeRun:
    """Run ``code`` as an ordinary Python script, off the device: imports and the network allowed.

    It runs as ``__main__`` with installed packages importable, in an empty temporary directory and
    environment, under the same limits. ``output`` is its stdout and stderr (a traceback included);
    ``value`` is the ``repr`` of a last bare expression, as in a notebook. A script ending with
    ``sys.exit(0)`` is fine; another exit status is the error.
    """
    started = time.perf_counter()
    refused = too_long(code, limits.max_code_chars)
    if refused is not None:
        return CodeRun(refused=refused, duration_seconds=time.perf_counter() - started)
    job = _job("script", code, limits, confinement)
    async with sandbox_process(site=True, output_limit=limits.max_output_chars, confinement=confinement,
                               tree=_tree(limits)) as process:
        outcome = await Conversation(process, limits).run(job, close_input=True)
    return _record(outcome, process, started)


def _tree(limits: SandboxLimits) -> tuple[int, int]:
    """The whole tree's bounds: as much memory as one process may have, and ``max_processes``."""
    return limits.memory_mb * 1024 * 1024, limits.max_processes


def codeact_confinement() -> Confinement:
    """CodeAct's default: namespaces where the machine can make them, else a plain process (its code is
    held to the policy's subset of Python either way)."""
    return Confinement("namespaces" if namespace_problem() is None else "process")


def _job(mode: str, code: str, limits: SandboxLimits, confinement: Confinement, **extra: Any) -> dict[str, Any]:
    """The first message to the child: what to run and under which limits (the number of processes
    only in namespaces, where it counts the child's own tree)."""
    processes = limits.max_processes if confinement.isolation == "namespaces" else None
    return {"mode": mode, "code": code, "memory_mb": limits.memory_mb, "cpu_seconds": limits.cpu_seconds,
            "max_processes": processes,
            "file_mb": limits.file_mb, "max_code_chars": limits.max_code_chars,
            "max_value_chars": limits.max_output_chars, "max_message_bytes": MAX_MESSAGE_BYTES, **extra}


def _record(outcome: Outcome, process: SandboxProcess, started: float) -> CodeRun:
    return CodeRun(error=outcome.error, output=process.output.text(), calls=tuple(outcome.calls),
                   timed_out=outcome.timed_out, stopped=outcome.stopped, value=outcome.value,
                   duration_seconds=time.perf_counter() - started)
