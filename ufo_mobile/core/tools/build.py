"""The agent's registry, built in one place: the built-in actions, then the user's custom tools
(``tools.custom``), then what the device and the state provider cannot do is dropped, then what
the user switched off (``tools.disabled``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.tools import actions as a
from ufo_mobile.core.tools import args
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.tools.registry import ToolRegistry
from ufo_mobile.core.ui.provider import StateProvider
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import Settings, ToolSettings, import_callable

#: name, function, argument model, capabilities needed, description (coordinates are screen pixels: each
#: agent's system prompt says so once, for all of them)
_BUILTINS: tuple[tuple[str, Callable[..., Any], type[BaseModel], frozenset[str] | None, str], ...] = (
    ("click", a.click, args.ClickArgs, frozenset({"tap", "element_index"}),
     "Tap a control."),
    ("long_press", a.long_press, args.ClickArgs, frozenset({"swipe", "element_index"}),
     "Press and hold a control."),
    ("click_at", a.click_at, args.PointArgs, frozenset({"tap", "convert_point"}),
     "Tap a point, when no control fits."),
    ("click_area", a.click_area, args.AreaArgs, frozenset({"tap", "convert_point"}),
     "Tap the centre of a rectangle."),
    ("long_press_at", a.long_press_at, args.PointArgs, frozenset({"swipe", "convert_point"}),
     "Press and hold a point."),
    ("type", a.type_text, args.TypeArgs, frozenset({"tap", "input_text", "element_index"}),
     "Type text as given into field index (tapped first; a label's number names its field), else into "
     "the focused field. clear=true replaces the field's text, else it is appended."),
    ("swipe", a.swipe, args.SwipeArgs, frozenset({"swipe", "convert_point"}),
     "Swipe from one point to another in duration seconds."),
    ("scroll", a.scroll, args.ScrollArgs, frozenset({"swipe"}),
     "Scroll control index (or the screen) to reveal what lies in direction."),
    ("system_button", a.system_button, args.SystemButtonArgs, frozenset({"press_key"}),
     "Press a key: enter submits, app_switch shows the recent apps."),
    ("open_app", a.open_app, args.OpenAppArgs, frozenset({"start_app", "get_apps"}),
     "Open an installed app by label or package."),
    ("wait", a.wait, args.WaitArgs, None,
     "Wait for the screen to change (loading, an animation)."),
    ("remember", a.remember, args.RememberArgs, None,
     "Keep a fact (a number, a name, something found) for the later steps."),
    ("complete", a.complete, args.CompleteArgs, None,
     "End the task: success=true with the answer or what was done as message, or success=false "
     "with why it cannot be done."),
)

_TYPE_SECRET: tuple[str, Callable[..., Any], type[BaseModel], frozenset[str] | None, str] = (
    "type_secret", a.type_secret, args.TypeSecretArgs, frozenset({"tap", "input_text", "element_index"}),
    "Type the secret with this id (you never see its value) into the field with this number (tapped "
    "first) or the focused field; the field's text is replaced.")

BUILTIN_TOOLS: tuple[str, ...] = (*(spec[0] for spec in _BUILTINS), _TYPE_SECRET[0])
"""Every built-in tool name (``type_secret`` exists only when secrets are configured)."""


def register_builtin_tools(registry: ToolRegistry, *, credentials: CredentialManager | None = None) -> None:
    """The built-in actions; ``type_secret`` only when ``credentials`` hold a secret."""
    specs = [*_BUILTINS, _TYPE_SECRET] if credentials is not None and len(credentials) else _BUILTINS
    for name, fn, model, deps, description in specs:
        registry.register(name, fn, model, description, deps)


def register_phone_keys(registry: ToolRegistry, keys: frozenset[str]) -> None:
    """``system_button`` with only the keys this phone has, and what they do said only of those."""
    said = [what for key, what in (("enter", "enter submits"), ("app_switch", "app_switch shows the recent apps"))
            if key in keys]
    registry.register("system_button", a.system_button, args.system_button_args(keys),
                      "Press a key" + (": " + ", ".join(said) + "." if said else "."), frozenset({"press_key"}))


def register_custom_tools(registry: ToolRegistry, settings: ToolSettings) -> None:
    """The user's tools from ``tools.custom``; parameters come from each function's signature.

    Raises:
        ConfigError: (one line, naming the key) a function does not import, is not callable, or
            has parameters that cannot be read.
    """
    for i, tool in enumerate(settings.custom):
        key = f"tools.custom.{i}.function"
        try:
            fn = import_callable(tool.function)
            description = tool.description or _doc_line(fn) or f"Tool: {tool.name}"
            registry.register(tool.name, fn, None, description, tool.deps)
        except (ValueError, TypeError) as exc:
            raise ConfigError(" ".join(str(exc).split()), key=key) from None


def check_tool_settings(settings: ToolSettings) -> None:
    """Raise the ``ConfigError`` that building the registry would raise, before a run starts."""
    custom = ToolRegistry()
    register_custom_tools(custom, settings)
    unknown = [name for name in settings.disabled if name not in BUILTIN_TOOLS and name not in custom]
    if unknown:
        known = ", ".join([*BUILTIN_TOOLS, *custom.names()])
        raise ConfigError(f"unknown tool {', '.join(map(repr, unknown))}; the tools are: {known}",
                          key="tools.disabled")


def build_tool_registry(settings: Settings, driver: DeviceDriver, state_provider: StateProvider,
                        credentials: CredentialManager | None = None) -> ToolRegistry:
    """The registry of one agent (see the module docstring for the order).

    Raises:
        ConfigError: a custom tool cannot be loaded, or ``tools.disabled`` names an unknown tool.
    """
    check_tool_settings(settings.tools)
    registry = ToolRegistry()
    register_builtin_tools(registry, credentials=credentials)
    if driver.keys is not None:  # a phone with fewer keys than Android's (an iPhone): only its own are offered
        register_phone_keys(registry, driver.keys)
    register_custom_tools(registry, settings.tools)
    registry.disable_unsupported(set(driver.supported) | set(state_provider.supported))
    registry.disable(settings.tools.disabled)
    return registry


def _doc_line(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())
