"""The base of every settings section: unknown keys are errors and a loaded value never changes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """A settings section: ``extra="forbid"`` (a misspelt key is an error) and frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)
