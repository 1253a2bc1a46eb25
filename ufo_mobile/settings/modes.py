"""The ``reasoning:`` and ``codeact:`` sections: the two modes beyond ``direct``, and the sandboxes
their off-device code runs in."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ufo_mobile.settings.strict import Strict


class ScripterSettings(Strict):
    """``reasoning.scripter``: the manager's ``<script>`` plan items, Python run off the phone in a sandbox."""

    enabled: bool = Field(default=False, description="let the manager run off-device Python (<script> items)")
    wall_seconds: float = Field(default=30.0, gt=0, description="how long one script may run")
    cpu_seconds: float = Field(default=20.0, gt=0, description="the CPU time one script may use")
    memory_mb: int = Field(default=512, ge=64, description="per process of the script")
    max_processes: int = Field(default=16, ge=1, description="processes of the script's whole tree (namespaces)")
    isolation: Literal["namespaces", "process"] = Field(
        default="namespaces", description="namespaces (bubblewrap): the script sees only its own files and "
                                          "processes; process: the weaker mode, named to be chosen")
    network: bool = Field(default=False, description="whether the script may reach the network (namespaces)")


class ReasoningSettings(Strict):
    """The ``reasoning:`` section (``mode: reasoning``): a manager that plans and an executor that acts."""

    err_to_manager_thresh: int = Field(default=2, ge=1, description="executor failures in a row before a replan")
    memory_items: int = Field(default=20, ge=1, description="facts the manager keeps (oldest dropped)")
    app_cards_dir: str | None = Field(default=None, description="per-app guidance: <dir>/<package>.md")
    scripter: ScripterSettings = Field(default=ScripterSettings(), description="the manager's off-device scripts")


class CodeActSettings(Strict):
    """The ``codeact:`` section (``mode: codeact``): the limits on the Python code of one reply."""

    wall_seconds: float = Field(default=10.0, gt=0, description="how long one reply's code may run")
    cpu_seconds: float = Field(default=10.0, gt=0, description="the CPU time one reply's code may use")
    memory_mb: int = Field(default=256, ge=64, description="memory one reply's code may use")
    max_tool_calls: int = Field(default=10, ge=1, description="tool calls one reply's code may make")
    isolation: Literal["auto", "namespaces", "process"] = Field(
        default="auto", description="auto: namespaces where the machine makes them, else a plain process")
