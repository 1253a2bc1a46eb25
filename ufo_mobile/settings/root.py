"""``Settings``: every section of a task's configuration together, as ``load_settings`` returns it
(the sections are in the other modules of this package)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from ufo_mobile.settings.agent import AgentSettings, HumanSettings, LimitSettings
from ufo_mobile.settings.device import DeviceSettings, PerceptionSettings
from ufo_mobile.settings.merge import merge
from ufo_mobile.settings.model import ModelRole, ModelSettings
from ufo_mobile.settings.modes import CodeActSettings, ReasoningSettings
from ufo_mobile.settings.run import LogSettings, ReplaySettings, TaskSettings
from ufo_mobile.settings.strict import Strict
from ufo_mobile.settings.tools import CredentialSettings, ToolSettings


class Settings(Strict):
    """Everything a run is configured with, one section per attribute (``default.yaml`` documents
    every key). Load it with ``load_settings(task_file)`` (or ``load_goal``, ``load_task``: the layers
    in ``loading.py``), or build it directly:
    ``Settings.model_validate({"task": {"text": "Turn on Wi-Fi"}, "model": {"kind": "openai"}})``;
    a missing ``device`` is the simulated phone. Frozen: ``model_copy(update=...)`` makes a changed one.
    """

    mode: Literal["direct", "reasoning", "codeact"] = "direct"
    task: TaskSettings
    device: DeviceSettings = DeviceSettings()
    model: ModelSettings
    models: dict[ModelRole, ModelSettings] = Field(
        default_factory=dict, description="a model per role, each written as changes to 'model' (e.g. "
                                          "executor: {name: gpt-4.1-mini}): a strong planner with a cheap executor")
    limits: LimitSettings = LimitSettings()
    perception: PerceptionSettings = PerceptionSettings()
    agent: AgentSettings = AgentSettings()
    logs: LogSettings = LogSettings()
    human: HumanSettings = HumanSettings()
    tools: ToolSettings = ToolSettings()
    credentials: CredentialSettings = CredentialSettings()
    reasoning: ReasoningSettings = ReasoningSettings()
    codeact: CodeActSettings = CodeActSettings()
    replay: ReplaySettings = ReplaySettings()

    @model_validator(mode="before")
    @classmethod
    def _roles_change_the_model(cls, data: Any) -> Any:
        """Each ``models.<role>`` is written as changes to ``model``: merged over it here."""
        if not isinstance(data, Mapping) or not isinstance(data.get("models"), Mapping):
            return data
        base = data.get("model")
        base = base.model_dump() if isinstance(base, ModelSettings) else base
        if not isinstance(base, Mapping):
            return data
        roles = {role: change if not isinstance(change, Mapping) else merge(dict(base), change)
                 for role, change in data["models"].items()}
        return {**data, "models": roles}

    def model_for(self, role: str) -> ModelSettings:
        """The model settings of ``role`` (a ``ModelRole``, or "agent"): its own (``models``), else ``model``."""
        return {str(k): v for k, v in self.models.items()}.get(role, self.model)

    def secrets(self) -> list[str]:
        """Secret values that must never be written anywhere."""
        keys = [self.model.api_key, *(m.api_key for m in self.models.values())]
        return list(dict.fromkeys(k.get_secret_value() for k in keys if k is not None and k.get_secret_value()))
