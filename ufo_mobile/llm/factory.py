"""Build the model named in the settings."""

from __future__ import annotations

from ufo_mobile.errors import ConfigError
from ufo_mobile.llm.base import ChatModel
from ufo_mobile.llm.scripted import ScriptedModel
from ufo_mobile.settings import ModelSettings


def make_model(settings: ModelSettings) -> ChatModel:
    if settings.script is None:
        raise ConfigError("the scripted model needs a reply script", key="model.script")
    return ScriptedModel.from_file(settings.script)
