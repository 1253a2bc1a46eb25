"""Packaged prompt templates (``ufo_mobile/prompts/*.yaml``), filled with strict substitution."""

from __future__ import annotations

from importlib import resources
from string import Template

from ufo_mobile import yamlio


class PromptTemplates:
    """The named templates of one prompt file. A missing placeholder value is an error."""

    def __init__(self, templates: dict[str, str]) -> None:
        self._templates = {k: Template(v) for k, v in templates.items()}

    @classmethod
    def load(cls, name: str) -> PromptTemplates:
        text = resources.files("ufo_mobile.prompts").joinpath(f"{name}.yaml").read_text(encoding="utf-8")
        data = yamlio.load_text(text, f"ufo_mobile/prompts/{name}.yaml")
        return cls({str(k): str(v) for k, v in data.items()})

    def render(self, name: str, **values: object) -> str:
        return self._templates[name].substitute({k: str(v) for k, v in values.items()}).strip()
