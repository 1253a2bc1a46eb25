"""The ``model:`` and ``models:`` sections: which language model each agent calls, and how."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, get_args
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator

from ufo_mobile.settings.strict import Strict


class RetrySettings(Strict):
    """How the model client retries 429, 5xx, timeouts and dropped connections."""

    max_retries: int = Field(default=4, ge=0, description="retries after the first attempt")
    budget_seconds: float = Field(default=90.0, gt=0, description="total time one call may take, retries included")
    base_delay_seconds: float = Field(default=1.0, gt=0, description="backoff before the first retry (doubles)")
    max_delay_seconds: float = Field(default=20.0, gt=0, description="longest backoff between two attempts")


class PriceSettings(Strict):
    """USD per million tokens; ``cached_input`` defaults to ``input`` (no cache discount)."""

    input: float = Field(ge=0, description="USD per million prompt tokens")
    cached_input: float | None = Field(default=None, ge=0, description="USD per million prompt tokens served "
                                                                       "from the provider's cache; None = input")
    output: float = Field(ge=0, description="USD per million completion tokens")


ModelKind = Literal["scripted", "openai", "azure", "openai_compatible"]


ReplyFormat = Literal["json", "ui-tars", "qwen-vl", "qwen3-vl", "autoglm"]
_NAMED: tuple[tuple[str, ReplyFormat], ...] = ((r"ui[-_ ]?tars", "ui-tars"), (r"gui[-_ ]?owl", "qwen-vl"),
                                               (r"auto[-_ ]?glm", "autoglm"))


class ModelSettings(Strict):
    """The ``model:`` section (and each entry of ``models:``): which language model an agent calls,
    where, and how. Keys come from the environment (``api_key_env``, the kind's usual variable, or
    ``api_key: ${VAR}``), never written in a file."""

    kind: ModelKind = Field(default="scripted", description="scripted (replies from a script file, offline), "
                            "openai, azure, or openai_compatible (vLLM, Ollama, LM Studio, ...)")
    script: Path | None = Field(default=None, description="reply script for the scripted model")
    name: str = Field(default="gpt-4o", min_length=1, description="the model (for azure: the deployment, "
                                                                  "unless azure_deployment is set)")
    base_url: str | None = Field(default=None, description="openai_compatible (required) or a proxy for openai")
    api_key: SecretStr | None = Field(default=None, description="use ${VAR}; never a literal key in a file")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                                    description="the variable holding the key (default per kind)")
    azure_endpoint: str | None = Field(default=None, description="None = $AZURE_OPENAI_ENDPOINT")
    azure_deployment: str | None = Field(default=None, description="None = name")
    api_version: str | None = Field(default=None, description="azure; None = $OPENAI_API_VERSION")
    temperature: float | None = Field(default=0.0, ge=0, le=2, description="None = not sent (reasoning models)")
    max_tokens: int = Field(default=1024, gt=0, description="the longest reply")
    timeout_seconds: float = Field(default=60.0, gt=0, description="bound on every attempt of a call")
    vision: bool = Field(default=True, description="send the (annotated) screenshot with every step")
    structured_output: Literal["auto", "json_schema", "off"] = Field(
        default="auto", description="auto: a JSON-schema response_format, plain JSON once the endpoint refuses it; "
                                    "json_schema: always; off: never")
    format: Literal["auto", ReplyFormat] = Field(
        default="auto", description="how the model is prompted and answers: json (numbered controls, a JSON "
                                    "reply), ui-tars (UI-TARS's Thought/Action with points on the screenshot), "
                                    "qwen-vl (Qwen2.5-VL's mobile_use tool calls, as GUI-Owl answers), autoglm "
                                    "(AutoGLM-Phone's do(...) lines on a 0-999 grid); auto: by the model's name "
                                    "(UI-TARS, GUI-Owl, AutoGLM), else json")
    retry: RetrySettings = Field(default=RetrySettings(), description="retries of a failed call")
    prices: dict[str, PriceSettings] = Field(default_factory=dict, description="per model, over the built-in table")

    @field_validator("base_url", "azure_endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parts = urlsplit(value)
            usable = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 0) >= 0
        except ValueError:  # a malformed port or IPv6 address
            usable = False
        if not usable:
            raise ValueError(f"not an http(s) URL: {value!r} (e.g. http://localhost:11434/v1)")
        return value

    @model_validator(mode="after")
    def _kind_needs(self) -> ModelSettings:
        if self.kind == "scripted" and self.script is None:
            raise ValueError("the scripted model needs 'script: <reply script file>'")
        if self.kind == "openai_compatible" and not self.base_url:
            raise ValueError("the openai_compatible model needs 'base_url: <server URL>', "
                             "e.g. http://localhost:11434/v1")
        if self.kind == "azure" and self.base_url:
            raise ValueError("azure takes its resource URL as 'azure_endpoint' (or $AZURE_OPENAI_ENDPOINT), "
                             "not 'base_url'")
        return self

    @property
    def reply_format(self) -> ReplyFormat:
        """``format``, with ``auto`` decided from the model's name (``reply_format``)."""
        return reply_format(self.kind, self.name, self.format)




def reply_format(kind: str, name: str, setting: str) -> ReplyFormat:
    """The format a model answers in: ``setting`` unless it is ``auto``; then ``ui-tars`` for a model
    whose name says UI-TARS, ``qwen-vl`` for GUI-Owl's, ``autoglm`` for AutoGLM's, else ``json`` (a
    scripted model's is ``json``)."""
    for known in get_args(ReplyFormat):
        if setting == known:
            return known  # type: ignore[no-any-return]
    for pattern, named in _NAMED:
        if kind != "scripted" and re.search(pattern, name, re.IGNORECASE):
            return named
    return "json"


ModelRole = Literal["manager", "executor", "text_manipulator", "scripter", "codeact"]
"""The agents that can name a model of their own (``models:``); the rest, and any role not named,
use ``model``."""
