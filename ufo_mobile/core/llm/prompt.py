"""Packaged prompt templates (``ufo_mobile/core/prompts/*.yaml``), rendered strictly.

Placeholders are ``$name`` (``string.Template``). Rendering is strict both ways: a placeholder with
no value and a value that no placeholder uses are both errors, so a template and the code that
fills it cannot drift apart silently. Optional parts of a prompt are templates of their own, joined
by ``compose`` only when they have content.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from string import Template

from ufo_mobile import yamlio


class PromptError(KeyError):
    """A template was rendered with a missing or an unused value."""


class PromptTemplates:
    """The named templates of one prompt file."""

    def __init__(self, templates: dict[str, str]) -> None:
        self._templates = {k: Template(v) for k, v in templates.items()}
        for name, template in self._templates.items():
            if not template.is_valid():
                raise ValueError(f"prompt template {name!r} has an invalid placeholder")

    @classmethod
    def load(cls, name: str) -> PromptTemplates:
        text = resources.files("ufo_mobile.core.prompts").joinpath(f"{name}.yaml").read_text(encoding="utf-8")
        data = yamlio.load_text(text, f"ufo_mobile/core/prompts/{name}.yaml")
        return cls({str(k): str(v) for k, v in data.items()})

    @property
    def names(self) -> list[str]:
        return list(self._templates)

    def placeholders(self, name: str) -> set[str]:
        return set(self._templates[name].get_identifiers())

    def render(self, template: str, /, **values: object) -> str:
        """Template ``template`` filled with ``values`` (any placeholder name works, ``name`` too).

        Raises:
            PromptError: a placeholder has no value, or a value has no placeholder.
        """
        wanted = self.placeholders(template)
        missing, unused = wanted - set(values), set(values) - wanted
        if missing or unused:
            raise PromptError(f"prompt {template!r}: missing {sorted(missing)}, unused {sorted(unused)}")
        return self._templates[template].substitute({k: str(v) for k, v in values.items()}).strip()


def compose(parts: Iterable[str]) -> str:
    """Join the non-empty parts of a prompt with a blank line between them."""
    return "\n\n".join(part for part in parts if part.strip())
