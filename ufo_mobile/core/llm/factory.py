"""Build the model named in the settings."""

from __future__ import annotations

from collections.abc import Mapping

from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.errors import ConfigError
from ufo_mobile.secret_env import environ
from ufo_mobile.settings import ModelSettings


def make_model(settings: ModelSettings, *, env: Mapping[str, str] | None = None, mode: str = "direct") -> ChatModel:
    """The model ``settings.kind`` names: the offline scripted model, or a real one through the
    ``openai`` SDK (imported only then).

    Raises:
        ConfigError: the script is missing or bad, or a real model's key, endpoint or API version
            is not set (the message names the variable).
    """
    if settings.kind == "scripted":
        if settings.script is None:
            raise ConfigError("the scripted model needs a reply script", key="model.script")
        model = ScriptedModel.from_file(settings.script)
        model.script = model.script.for_mode(mode, settings.reply_format)
        return model
    from ufo_mobile.core.llm.openai_chat import OpenAIChatModel

    return OpenAIChatModel.from_settings(settings, environ() if env is None else env)
