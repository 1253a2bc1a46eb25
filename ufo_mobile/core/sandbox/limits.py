"""The bounds of one sandboxed run, as a value object (it can sit in the settings as it is)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SandboxLimits(BaseModel):
    """How long, how big and how chatty one run of model-written code may be.

    ``wall_seconds`` is the code's own time: the clock stops while a tool call runs, and each tool
    call has ``tool_seconds`` of its own. A CodeAct run can therefore last up to
    ``wall_seconds + max_tool_calls * tool_seconds``; a script (no tools) at most ``wall_seconds``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_seconds: float = Field(default=10.0, gt=0, description="wall-clock time of the code, tool calls excluded")
    cpu_seconds: int = Field(default=10, gt=0, description="CPU time of the sandbox process (RLIMIT_CPU)")
    memory_mb: int = Field(default=256, ge=32, description="address space of the sandbox process (RLIMIT_AS)")
    file_mb: int = Field(default=64, gt=0, description="largest file a script may write (RLIMIT_FSIZE)")
    max_processes: int = Field(default=16, ge=1, description="processes of the whole child tree, in namespaces "
                                                            "(RLIMIT_NPROC of its own user namespace)")
    max_output_chars: int = Field(default=8000, gt=0, description="printed output kept (first and last halves)")
    max_tool_calls: int = Field(default=20, ge=0, description="tool calls per run; one more ends the run")
    max_code_chars: int = Field(default=20_000, gt=0, description="longest code accepted")
    tool_seconds: float = Field(default=30.0, gt=0, description="bound on one tool call (the callback)")
