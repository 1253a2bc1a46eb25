"""Secrets the agent may type (``type_secret``) but never see.

Values come from environment variables (``credentials.env: {id: VAR}``) or from a YAML file
``{id: value}`` kept outside every git work tree (``credentials.file``). The model is told the
ids only (``ids()``); the session adds every value to the run's ``Redactor``, so no value reaches
a prompt, reply, log, report, terminal line or file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from ufo_mobile import yamlio
from ufo_mobile.errors import ConfigError, InvalidActionError
from ufo_mobile.safe_text import printable
from ufo_mobile.secret_env import environ, take
from ufo_mobile.settings import CredentialSettings

SECRET_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
"""What a secret id looks like: it is shown to the model, so it is a plain name."""


MIN_SECRET_CHARS = 6
"""The shortest secret accepted: every occurrence of a secret's text is redacted, everywhere."""


class CredentialManager:
    """Secret values by id. ``repr`` and ``str`` show the ids, never the values."""

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        self._secrets: dict[str, str] = {}
        for secret_id, value in (secrets or {}).items():
            if not SECRET_ID.fullmatch(secret_id):
                raise ValueError(f"secret id {printable(secret_id, 80)!r} must be a plain name "
                                 "(letters, digits, '_', '.', '-')")
            if not isinstance(value, str) or not value:
                raise ValueError(f"secret {secret_id!r} must be a non-empty string")
            self._secrets[secret_id] = value

    @classmethod
    def from_settings(cls, settings: CredentialSettings, *, env: Mapping[str, str] | None = None
                      ) -> CredentialManager:
        """Read every secret the settings name.

        Raises:
            ConfigError: a variable is unset or empty; the file is missing, malformed, not a
                mapping of names to strings, or inside a git work tree; an id is defined twice.
        """
        env = environ() if env is None else env
        secrets: dict[str, str] = {}
        if settings.file is not None:
            secrets.update(read_secrets_file(settings.file))
        for secret_id, variable in settings.env.items():
            key = f"credentials.env.{secret_id}"
            if secret_id in secrets:
                raise ConfigError(f"secret {secret_id!r} is also defined in the credentials file", key=key)
            value = take(variable, env) or ""
            if not value:
                raise ConfigError(f"environment variable {variable} is not set"
                                  + (" (it is empty)" if variable in env else ""), key=key)
            secrets[secret_id] = value
        for secret_id, value in secrets.items():
            if len(value) < MIN_SECRET_CHARS:
                where = (f"credentials.env.{secret_id}" if secret_id in settings.env
                         else f"credentials.file: {secret_id}")
                raise ConfigError(f"a secret needs at least {MIN_SECRET_CHARS} characters ({len(value)} given): "
                                  "a shorter one (a PIN) would be found in ordinary text, such as a screen size, "
                                  "and erase it from every log and prompt; let a person type it (a takeover)",
                                  key=where)
        return cls(secrets)

    def ids(self) -> list[str]:
        """The secret ids, sorted: all the model may know about the secrets."""
        return sorted(self._secrets)

    def values(self) -> list[str]:
        """Every secret value (for the redactor; never for display)."""
        return list(self._secrets.values())

    def resolve(self, secret_id: str) -> str:
        """The value of ``secret_id``.

        Raises:
            InvalidActionError: no such id (the message lists the ids, not values).
        """
        try:
            return self._secrets[secret_id]
        except KeyError:
            known = ", ".join(self.ids()) or "none"
            raise InvalidActionError(f"no secret {printable(secret_id, 80)!r}; available secret ids: {known}"
                                     ) from None

    def __len__(self) -> int:
        return len(self._secrets)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids())

    def __contains__(self, secret_id: object) -> bool:
        return secret_id in self._secrets

    def __repr__(self) -> str:
        return f"CredentialManager(ids={self.ids()!r})"


def git_work_tree(path: Path) -> Path | None:
    """The root of the git work tree holding ``path`` (a ``.git`` directory or file), if any."""
    for folder in path.parents:
        if (folder / ".git").exists():
            return folder
    return None


def read_secrets_file(path: Path) -> dict[str, str]:
    """The ``{id: value}`` mapping of a secrets file (see ``CredentialManager.from_settings``)."""
    key = "credentials.file"
    real = Path(path).expanduser().resolve()
    repo = git_work_tree(real)
    if repo is not None:
        raise ConfigError(f"{real} is inside the git work tree {repo}; keep secrets outside every "
                          "repository", key=key)
    try:
        data = yamlio.load_file(real)
    except ConfigError as exc:
        if exc.message.startswith("invalid YAML"):  # the parser's detail may quote a value
            raise ConfigError("invalid YAML (details withheld: the file holds secrets)",
                              path=str(real), line=exc.line) from None
        raise
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("the credentials file must be a mapping of secret ids to values", path=str(real))
    out: dict[str, str] = {}
    for secret_id, value in data.items():
        if not isinstance(secret_id, str) or not SECRET_ID.fullmatch(secret_id):
            raise ConfigError("every secret id must be a plain name (letters, digits, '_', '.', '-')",
                              path=str(real))
        if not isinstance(value, str) or not value:
            raise ConfigError(f"the value of {secret_id!r} must be a non-empty string (quote it)",
                              path=str(real))
        out[secret_id] = value
    return out
