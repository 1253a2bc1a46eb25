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
    """Everything one run is configured by: the task, the mode, the phone, the model and the limits,
    one section per key of a task file (``config/default.yaml`` lists them all with their defaults).

    ``load_settings`` (``ufo_mobile.settings``) reads them from a task file, its defaults file, the
    user config and command-line overrides (``load_goal`` for a goal: the layers are in
    ``loading.py``); from Python they can also be made directly, e.g.
    ``Settings(task={"text": "Turn on Wi-Fi"}, model={"kind": "openai", "name": "gpt-4o"})``. Only
    ``task`` and ``model`` are required; ``device.kind`` defaults to ``sim``, the built-in simulated
    phone. Unknown keys are errors (pydantic's ``ValidationError``).
    """

    mode: Literal["direct", "reasoning", "codeact"] = Field(
        default="direct", description="direct: one agent, one action per reply; reasoning: a manager plans "
                                      "and an executor acts; codeact: the model writes Python that calls the tools")
    task: TaskSettings = Field(description="what the agent is asked to do")
    device: DeviceSettings = Field(default=DeviceSettings(), description="the phone (kind sim: the simulated one)")
    model: ModelSettings = Field(description="the model every agent calls unless 'models' names its own")
    models: dict[ModelRole, ModelSettings] = Field(
        default_factory=dict, description="a model per role, each written as changes to 'model' (e.g. "
                                          "executor: {name: gpt-4.1-mini}): a strong planner with a cheap executor")
    limits: LimitSettings = Field(default=LimitSettings(), description="the step budget and what ends a run early")
    perception: PerceptionSettings = Field(default=PerceptionSettings(), description="how the screen is read")
    agent: AgentSettings = Field(default=AgentSettings(), description="history shown and how actions run")
    logs: LogSettings = Field(default=LogSettings(), description="where run directories go")
    human: HumanSettings = Field(default=HumanSettings(), description="approvals, questions and takeovers")
    tools: ToolSettings = Field(default=ToolSettings(), description="the tools offered to the model")
    credentials: CredentialSettings = Field(default=CredentialSettings(), description="secrets typed by id")
    reasoning: ReasoningSettings = Field(default=ReasoningSettings(), description="mode: reasoning")
    codeact: CodeActSettings = Field(default=CodeActSettings(), description="mode: codeact")
    replay: ReplaySettings = Field(default=ReplaySettings(), description="guarded replay and the run cache")

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

    @model_validator(mode="after")
    def _formats_in_their_mode(self) -> Settings:
        answers = self.model.reply_format
        if answers != "json" and self.mode != "direct":
            raise ValueError(f"model.format {answers} answers with points on the screenshot: it "
                             f"works with mode direct (mode {self.mode} needs the json format)")
        if answers != "json" and not self.model.vision:
            raise ValueError(f"model.format {answers} points on the screenshot: it needs model.vision: true")
        if answers != "json" and self.perception.source == "dump":
            raise ValueError(f"model.format {answers} points on the screenshot: perception.source dump takes "
                             "none (use both or screenshot)")
        return self

    def model_for(self, role: str) -> ModelSettings:
        """The model settings of ``role`` (a ``ModelRole``, or "agent"): its own (``models``), else ``model``."""
        return {str(k): v for k, v in self.models.items()}.get(role, self.model)

    def sends_screenshot(self, role: str) -> bool:
        """Whether ``role``'s model is sent the screenshot: its ``vision``, in a run that takes one."""
        return self.model_for(role).vision and self.perception.source != "dump"

    def secrets(self) -> list[str]:
        """Secret values that must never be written anywhere."""
        keys = [self.model.api_key, *(m.api_key for m in self.models.values())]
        return list(dict.fromkeys(k.get_secret_value() for k in keys if k is not None and k.get_secret_value()))
