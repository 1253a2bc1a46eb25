"""Where a real model lives and how to reach it: the settings and the environment, resolved once.

The key comes from ``model.api_key`` (write ``${VAR}`` in a file, never the key itself), else from
the variable named by ``model.api_key_env``, else from the kind's usual variable:

==================  =========================================================================
kind                needs
==================  =========================================================================
openai              ``OPENAI_API_KEY``; ``model.base_url`` or ``$OPENAI_BASE_URL`` for a proxy
azure               ``AZURE_OPENAI_API_KEY``, ``AZURE_OPENAI_ENDPOINT`` (or
                    ``model.azure_endpoint``), ``OPENAI_API_VERSION`` (or ``model.api_version``);
                    the deployment is ``model.azure_deployment``, else ``model.name``
openai_compatible   ``model.base_url``; a key only if ``model.api_key(_env)`` names one (your
                    ``OPENAI_API_KEY`` is never sent to another server unasked)
==================  =========================================================================

Anything missing is a ``ConfigError`` naming the variable, raised before a run starts; when azure
lacks several, the one error names them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from ufo_mobile.errors import ConfigError
from ufo_mobile.secret_env import take
from ufo_mobile.settings import ModelSettings

if TYPE_CHECKING:
    from openai import AsyncOpenAI

OPENAI_URL = "https://api.openai.com/v1"
_DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "azure": "AZURE_OPENAI_API_KEY"}
# The SDK refuses to build a client without a key; a keyless server gets this one, and every
# request then omits the Authorization header (see ``OpenAIChatModel``): nothing is sent.
_NO_KEY = "no-key"


def host_of(url: str) -> str | None:
    """The host (and port) of ``url``, with no scheme, user, password, path or query; None when it has
    none or does not parse."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port else host


@dataclass(frozen=True)
class Endpoint:
    kind: str
    model: str  # the name sent in each request (azure: the deployment)
    url: str  # the base URL (azure: the resource endpoint); messages name ``shown``
    key: str | None = field(default=None, repr=False)
    key_source: str = ""  # "OPENAI_API_KEY", "model.api_key", ... ("" when no key is sent)
    api_version: str | None = None  # azure only

    @property
    def deployment(self) -> str:
        return self.model

    @property
    def shown(self) -> str:
        """The URL as messages name it: without a ``user:password@`` or a query, which may carry a
        credential (``https://user:pw@host/v1?key=...`` -> ``https://host/v1``)."""
        host = host_of(self.url)
        if host is None:
            return "(a URL that does not parse)"
        parts = urlsplit(self.url)  # it parsed in host_of
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    def key_hint(self) -> str:
        """What to check when the server refuses the key."""
        if not self.key_source:
            return ("no key was sent: put the server's key in an environment variable and name it in "
                    "model.api_key_env")
        if self.key_source.startswith("model."):
            return f"check the key given in {self.key_source}"
        return f"check the key in ${self.key_source}"

    def secrets(self) -> list[str]:
        return [self.key] if self.key else []


def resolve_endpoint(settings: ModelSettings, env: Mapping[str, str]) -> Endpoint:
    """The endpoint the settings describe, with the key and URLs read from ``env``.

    Raises:
        ConfigError: a required variable or setting is missing (the message names it).
    """
    if settings.kind == "scripted":
        raise ConfigError("the scripted model has no endpoint", key="model.kind")
    if settings.kind == "azure":
        return _azure(settings, env)
    key, source = _key(settings, env)
    if settings.kind == "openai":
        url = settings.base_url or env.get("OPENAI_BASE_URL") or OPENAI_URL
    else:
        url = settings.base_url or ""  # the settings validator requires it for openai_compatible
    return Endpoint(settings.kind, settings.name, url, key, source)


def _key(settings: ModelSettings, env: Mapping[str, str]) -> tuple[str | None, str]:
    if settings.api_key is not None and settings.api_key.get_secret_value():
        return settings.api_key.get_secret_value(), "model.api_key"
    if settings.api_key_env:
        value = take(settings.api_key_env, env) or ""
        if not value:
            raise ConfigError(f"the environment variable {settings.api_key_env} (named as the API key's "
                              f"variable) is {'empty' if settings.api_key_env in env else 'not set'}",
                              key="model.api_key_env")
        return value, settings.api_key_env
    variable = _DEFAULT_KEY_ENV.get(settings.kind)
    if variable is None:  # openai_compatible: a local server may need no key
        return None, ""
    found = take(variable, env)
    if not found:
        state = "is empty" if found is not None else "is not set"
        raise ConfigError(f"no API key for the {settings.kind} model: {variable} {state} (export it, or name "
                          "another variable in model.api_key_env)", key="model.api_key")
    return found, variable


def _azure(settings: ModelSettings, env: Mapping[str, str]) -> Endpoint:
    """Azure's endpoint; whatever is missing (key, resource endpoint, API version) is named in one error.
    (The deployment is never missing: ``model.name`` has a default.)"""
    missing: list[ConfigError] = []
    key, source = None, ""
    try:
        key, source = _key(settings, env)
    except ConfigError as error:
        missing.append(error)
    endpoint = _setting_or_env(settings.azure_endpoint, "model.azure_endpoint", "AZURE_OPENAI_ENDPOINT", env,
                               example="https://<resource>.openai.azure.com", missing=missing)
    version = _setting_or_env(settings.api_version, "model.api_version", "OPENAI_API_VERSION", env,
                              example="2024-10-21", missing=missing)
    if len(missing) == 1:
        raise missing[0]
    if missing:
        raise ConfigError(f"the azure model lacks {len(missing)} settings: "
                          + "; ".join(f"{error.key}: {error.message}" for error in missing), key="model")
    return Endpoint("azure", settings.azure_deployment or settings.name, endpoint, key, source, version)


def _setting_or_env(value: str | None, key: str, variable: str, env: Mapping[str, str], *, example: str,
                    missing: list[ConfigError]) -> str:
    """The setting, else the variable; neither: an error added to ``missing`` and ""."""
    if value:
        return value
    if env.get(variable):
        return env[variable]
    missing.append(ConfigError(f"the azure model needs {key} or ${variable} (e.g. {example})", key=key))
    return ""


def open_client(endpoint: Endpoint, *, timeout: float) -> AsyncOpenAI:
    """The SDK's async client for ``endpoint``, with the SDK's own retries off (we retry ourselves)."""
    from openai import AsyncAzureOpenAI, AsyncOpenAI

    if endpoint.kind == "azure":
        return AsyncAzureOpenAI(api_key=endpoint.key, azure_endpoint=endpoint.url,
                                azure_deployment=endpoint.deployment, api_version=endpoint.api_version,
                                max_retries=0, timeout=timeout)
    return AsyncOpenAI(api_key=endpoint.key or _NO_KEY, base_url=endpoint.url, max_retries=0, timeout=timeout)
