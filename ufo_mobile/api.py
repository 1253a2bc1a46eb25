"""The small Python API: one call runs a goal on a phone and returns its ``RunResult``.

    import ufo_mobile

    result = ufo_mobile.run("Turn on Wi-Fi")                       # the user config's model and phone
    result = ufo_mobile.run("Turn on Wi-Fi", device="emulator-5554", model="gpt-4.1-mini")
    print(result.status, result.answer, result.run_dir)

``run`` takes the same settings as ``python -m ufo_mobile run``: the shipped defaults, the user
config file and the ``UFO_MOBILE_*`` variables (``ufo_mobile/settings/user.py``), a defaults file
(``config``), then the arguments; and it settles the phone the same way
(``ufo_mobile/core/device/choice.py``), except that it never asks: with no device named and one phone
on the adb server it logs a warning and uses the simulated phone (``device_choose="phone"`` uses it).
Inside a running event loop (Jupyter, an ``async def``) await ``run_async`` instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from ufo_mobile import shipped
from ufo_mobile.core.device.choice import choose_device
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import Loaded, Settings, load_goal, load_task, merge, user_config_path

log = logging.getLogger("ufo_mobile")

Mode = Literal["direct", "reasoning", "codeact"]
Provider = Literal["openai", "azure", "openai_compatible", "scripted"]


def run(goal: str | Path, *, device: str | None = None, model: str | None = None, mode: Mode | None = None,
        max_steps: int | None = None, config: str | Path | None = None, provider: Provider | None = None,
        base_url: str | None = None, driver: Literal["adb", "u2"] | None = None, log_dir: str | Path | None = None,
        settings: Mapping[str, Any] | None = None) -> RunResult:
    """Run ``goal`` to its end and return the result (blocking; see ``run_async`` for async code).

    Args:
        goal: what to do, in words ("Turn on Wi-Fi"); a ``Path`` is a task file (or a shipped task's
            name, ``Path("demo")``) instead.
        device: "sim" for the simulated phone, or an adb serial / host:port; None: the one the
            settings name (with none named, the simulated phone; see the module's docstring).
        model: the model's name (``model.name``).
        mode: "direct", "reasoning" or "codeact".
        max_steps: the step budget (``limits.max_steps``).
        config: a defaults file (YAML, default.yaml's keys) under the task and these arguments.
        provider: the model's kind (``model.kind``): openai, azure, openai_compatible or scripted.
        base_url: the model server's URL (``model.base_url``; for azure ``model.azure_endpoint``).
        driver: with a real phone, "adb" or "u2" (uiautomator2).
        log_dir: where the run directory goes (``logs.dir``, default ``logs``).
        settings: any other settings, as nested mappings laid over everything else, e.g.
            ``{"perception": {"annotate": False}, "device": {"choose": "phone"}}``.

    Returns:
        The ``RunResult``: ``status`` (FINISH or FAIL), ``ok``, ``answer``, ``reason``, ``steps``,
        ``actions_failed``, tokens and cost, and ``run_dir`` (with ``report.html``).

    Raises:
        ConfigError: the settings do not load (no model named anywhere, a bad file or value).
        RuntimeError: called inside a running event loop (await ``run_async`` there).

    Example:
        >>> result = ufo_mobile.run("Turn on Wi-Fi", provider="openai", model="gpt-4.1-mini")
        >>> result.ok
        True
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("ufo_mobile.run cannot run inside a running event loop (Jupyter, an async "
                           "function): use 'await ufo_mobile.run_async(...)' there")
    return asyncio.run(run_async(goal, device=device, model=model, mode=mode, max_steps=max_steps, config=config,
                                 provider=provider, base_url=base_url, driver=driver, log_dir=log_dir,
                                 settings=settings))


async def run_async(goal: str | Path, *, device: str | None = None, model: str | None = None,
                    mode: Mode | None = None, max_steps: int | None = None, config: str | Path | None = None,
                    provider: Provider | None = None, base_url: str | None = None,
                    driver: Literal["adb", "u2"] | None = None, log_dir: str | Path | None = None,
                    settings: Mapping[str, Any] | None = None) -> RunResult:
    """``run``'s async twin, for code that already runs an event loop: the same arguments, the
    same result and errors (``await ufo_mobile.run_async("Turn on Wi-Fi")``)."""
    ready = settings_for(goal, device=device, model=model, mode=mode, max_steps=max_steps, config=config,
                         provider=provider, base_url=base_url, driver=driver, log_dir=log_dir, settings=settings)
    return await Session(ready).run()


def settings_for(goal: str | Path, *, device: str | None = None, model: str | None = None, mode: Mode | None = None,
                 max_steps: int | None = None, config: str | Path | None = None, provider: Provider | None = None,
                 base_url: str | None = None, driver: Literal["adb", "u2"] | None = None,
                 log_dir: str | Path | None = None, settings: Mapping[str, Any] | None = None) -> Settings:
    """The ``Settings`` ``run`` would run with (the same arguments), on the phone it would use.

    Raises:
        ConfigError: as ``run``.
    """
    overrides = merge(_overrides(device=device, model=model, mode=mode, max_steps=max_steps, provider=provider,
                                 base_url=base_url, driver=driver, log_dir=log_dir), settings or {})
    config_path = Path(config) if config is not None else None
    loaded = _load(goal, config_path, overrides)
    ready = loaded.settings
    if device not in (None, "sim") and driver is None and ready.device.kind == "sim":
        ready = ready.model_copy(update={"device": ready.device.model_copy(update={"kind": "adb"})})
    choice = choose_device(ready, named=loaded.device_named, where=str(user_config_path()))
    if choice.note:
        log.warning("%s", choice.note)
    return choice.settings


def _load(goal: str | Path, config: Path | None, overrides: dict[str, Any]) -> Loaded:
    if isinstance(goal, Path):
        return load_task(shipped.task_path(goal), config_path=config, overrides=overrides)
    if not goal.strip():
        raise ConfigError("the goal is empty", key="goal")
    try:
        return load_goal(" ".join(goal.split()), config_path=config, overrides=overrides)
    except ConfigError as exc:
        if exc.message.startswith("the scripted model needs"):
            raise ConfigError("a goal needs a model: name one in your user config (python -m ufo_mobile config "
                              "--init writes a starter), or pass provider= and model=", key="model") from None
        raise


def _overrides(*, device: str | None, model: str | None, mode: str | None, max_steps: int | None,
               provider: str | None, base_url: str | None, driver: str | None,
               log_dir: str | Path | None) -> dict[str, Any]:
    """The arguments as settings (what the command line's options are there)."""
    model_part: dict[str, Any] = {}
    if provider is not None:
        model_part["kind"] = provider
    if model is not None:
        model_part["name"] = model
    if base_url is not None:
        model_part["azure_endpoint" if provider == "azure" else "base_url"] = base_url
    device_part: dict[str, Any] = {"kind": "sim"} if device == "sim" else {}
    if device not in (None, "sim"):
        device_part["serial"] = device
    if driver is not None:
        if device == "sim":
            raise ConfigError("driver is for real phones; the simulated phone needs none", key="driver")
        device_part["kind"] = driver
    out: dict[str, Any] = {"model": model_part, "device": device_part}
    if mode is not None:
        out["mode"] = mode
    if max_steps is not None:
        out["limits"] = {"max_steps": max_steps}
    if log_dir is not None:
        out["logs"] = {"dir": str(log_dir)}
    return {k: v for k, v in out.items() if v}
