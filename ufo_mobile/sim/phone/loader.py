"""Load app files: YAML -> validated ``App``, with errors that name the file and the field.

Validation has two layers: the pydantic schema (shapes, unknown keys) and ``check_app``, which
follows references the schema cannot see (a ``goto`` to a missing screen, a template naming an
undeclared state variable, ``append`` to something that is not a list).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ufo_mobile import yamlio
from ufo_mobile.errors import ConfigError, SimulatorError
from ufo_mobile.sim.phone import template
from ufo_mobile.sim.phone.behaviour import Condition, Effect
from ufo_mobile.sim.phone.model import App, Node

#: Built-in apps in install order (the launcher grid follows it); other packaged files follow.
BUILTIN_ORDER = ("launcher.yaml", "settings.yaml", "contacts.yaml", "messages.yaml", "notes.yaml")
PHONE_VARIABLES = frozenset({"@time", "@date", "@index", "@apps", "@parent"})


def load_app_text(text: str, source: str) -> App:
    """Parse and validate one app from YAML text; ``source`` names it in errors."""
    try:
        data = yamlio.load_text(text, source)  # bounded size, alias expansion and depth
    except ConfigError as exc:
        raise SimulatorError(str(exc)) from exc  # "source:line: message", as our other errors
    if not isinstance(data, dict):
        raise SimulatorError(f"{source}: an app file must be a mapping with package, label, start, screens")
    boolean_key = _find_boolean_key(data, "")
    if boolean_key is not None:
        raise SimulatorError(f"{source}: {boolean_key}: a key read as a boolean (YAML reads unquoted "
                             "yes/no/on/off as true/false; quote the key or rename it)")
    try:
        app = App.model_validate(data)
    except ValidationError as exc:
        raise SimulatorError(f"{source}: {_describe(exc)}") from exc
    problems = check_app(app)
    if problems:
        raise SimulatorError(f"{source}: " + "; ".join(problems))
    return app


def load_app_file(path: str | Path) -> App:
    """Load an app file from disk."""
    file = Path(path)
    try:
        text = yamlio.read_text(file)
    except ConfigError as exc:
        where = f"{file}:{exc.line}" if exc.line is not None else str(file)
        raise SimulatorError(f"{where}: cannot read app file: {exc.message.removeprefix('cannot read: ')}") from exc
    return load_app_text(text, str(file))


def builtin_apps() -> list[App]:
    """The apps shipped in ``ufo_mobile/sim/apps`` that a new phone has, launcher first."""
    return [app for app in _packaged_apps() if app.preinstalled]


def packaged_app(package: str) -> App:
    """A shipped app by package, preinstalled or not (``preinstalled: false`` apps such as the video
    player are installed by the device profiles that want them)."""
    for app in _packaged_apps():
        if app.package == package:
            return app
    raise SimulatorError(f"no shipped app {package!r}")


@functools.cache
def _packaged_apps() -> tuple[App, ...]:
    """Parsed once per process (every ``SimPhone`` installs them): the files are package data that
    do not change, and an ``App`` is frozen; ``SimPhone`` copies the state it mutates."""
    folder = resources.files("ufo_mobile.sim").joinpath("apps")
    names = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".yaml"))
    ordered = [name for name in BUILTIN_ORDER if name in names]
    ordered += [name for name in names if name not in BUILTIN_ORDER]
    return tuple(load_app_text(folder.joinpath(name).read_text(encoding="utf-8"), f"sim/apps/{name}")
                 for name in ordered)


def _find_boolean_key(data: Any, path: str) -> str | None:
    """The path of the first mapping key that YAML turned into a boolean, if any."""
    if isinstance(data, dict):
        for key, value in data.items():
            here = f"{path}.{key}" if path else str(key)
            if isinstance(key, bool):
                return here
            found = _find_boolean_key(value, here)
            if found is not None:
                return found
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found = _find_boolean_key(value, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def _describe(exc: ValidationError) -> str:
    """The first validation errors as ``screens.main.body[0].on_tap[0]: message``."""
    parts = []
    for error in exc.errors()[:3]:
        location = ""
        for item in error["loc"]:
            location += f"[{item}]" if isinstance(item, int) else (f".{item}" if location else str(item))
        parts.append(f"{location or '<root>'}: {error['msg']}")
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


# -- cross-reference checks --------------------------------------------------------------------


def check_app(app: App) -> list[str]:
    """Problems the schema cannot catch, each prefixed with the field path."""
    problems: list[str] = []
    for path, node, bound in _nodes(app):
        checked = _Bound(app, bound)
        problems.extend(f"{path}: {msg}" for msg in _check_node(checked, node))
        for field in ("on_tap", "on_long_press", "submit"):
            for index, effect in enumerate(getattr(node, field)):
                problems.extend(f"{path}.{field}[{index}]: {msg}" for msg in _check_effect(checked, effect))
    for name, screen in app.screens.items():
        problems.extend(f"screens.{name}.title: {msg}" for msg in _check_template(app, screen.title))
        if screen.focus is not None and screen.focus not in app.state:
            problems.append(f"screens.{name}.focus: unknown state variable {screen.focus!r}")
    return problems


class _Bound:
    """An app seen from inside a node: its state plus the ``let`` names of the node and its ancestors
    (``_known`` accepts both; the checks take it where they take the app)."""

    def __init__(self, app: App, bound: frozenset[str]) -> None:
        self.app = app
        self.state: dict[str, Any] = {**app.state, **{name: [] for name in bound}}
        self.screens = app.screens
        self.package = app.package


def _nodes(app: App) -> Iterator[tuple[str, Node, frozenset[str]]]:
    for name, screen in app.screens.items():
        for field in ("actions", "body"):
            for index, node in enumerate(getattr(screen, field)):
                yield from _walk(f"screens.{name}.{field}[{index}]", node, frozenset())


def _walk(path: str, node: Node, bound: frozenset[str]) -> Iterator[tuple[str, Node, frozenset[str]]]:
    inner = bound | frozenset(node.let)
    yield path, node, inner
    for index, child in enumerate(node.children):
        yield from _walk(f"{path}.children[{index}]", child, inner)


def _known(app: App | _Bound, name: str) -> bool:
    name = name.partition("#")[0]  # events# (a count), events#title (a join)
    return (name == "item" or name.startswith("item.") or name in PHONE_VARIABLES or name.startswith("@parent.")
            or name in app.state)


def _check_template(app: App | _Bound, text: str) -> list[str]:
    return [f"unknown variable {{{name}}}" for name in template.names(text) if not _known(app, name)]


def _check_var(app: App | _Bound, name: str | None, what: str) -> list[str]:
    """A variable a widget or an effect writes: a state variable (not a ``let`` name)."""
    state = app.app.state if isinstance(app, _Bound) else app.state
    if name is None or name in state:
        return []
    return [f"{what}: unknown state variable {name!r} (declare it under state)"]


def _check_target(app: App | _Bound, name: str | None, what: str) -> list[str]:
    """A variable an effect changes: a state variable, or ``item.field`` (the tapped row's item)."""
    if name is not None and name.startswith("item.") and len(name) > len("item."):
        return []
    return _check_var(app, name, what)


def _check_list(app: App | _Bound, name: str, what: str) -> list[str]:
    if name == "@apps" or name.startswith("item"):
        return []
    if name not in app.state:
        return [f"{what}: unknown state variable {name!r} (declare it under state)"]
    if not isinstance(app.state[name], list):
        return [f"{what}: state variable {name!r} is not a list"]
    return []


def _check_conditions(app: App | _Bound, conditions: list[Condition], what: str) -> list[str]:
    problems: list[str] = []
    for condition in conditions:
        if not _known(app, condition.var):
            problems.append(f"{what}: unknown variable {condition.var!r}")
        for text in (condition.equals, condition.contains):
            if isinstance(text, str):
                problems += [f"{what}: {msg}" for msg in _check_template(app, text)]
    return problems


def _check_node(app: _Bound, node: Node) -> list[str]:
    problems: list[str] = []
    for text in (node.text, node.desc, node.hint, node.icon):
        problems += _check_template(app, text)
    problems += _check_var(app, node.bind, "bind")
    problems += _check_conditions(app, node.visible, "visible")
    if not isinstance(node.selected, bool):
        problems += _check_conditions(app, node.selected, "selected")
    if node.for_each is not None:
        problems += _check_list(app, node.for_each.source, "for_each")
        problems += _check_conditions(app, node.for_each.where, "for_each.where")
    for name, query in node.let.items():
        if name in app.app.state or name.startswith(("item", "@")):
            problems.append(f"let.{name}: the name is taken (a state variable, item or an @ variable)")
        problems += _check_list(app, query.source, f"let.{name}")
        problems += _check_conditions(app, query.where, f"let.{name}.where")
    if node.submit and node.kind != "field":
        problems.append("submit needs an EditText with bind")
    return problems


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _check_effect(app: App | _Bound, effect: Effect) -> list[str]:
    problems = _check_conditions(app, effect.when, "when")
    if effect.goto is not None and effect.goto.screen not in app.screens:
        problems.append(f"goto: unknown screen {effect.goto.screen!r} (screens: {', '.join(app.screens)})")
    if effect.launch is not None:
        if effect.launch.package == app.package and effect.launch.screen not in (None, *app.screens):
            problems.append(f"launch: unknown screen {effect.launch.screen!r}")
        values: Any = [effect.launch.package, effect.launch.extras]
    else:
        values = []
    problems += _check_target(app, effect.toggle, "toggle")
    if effect.increment is not None:
        problems += _check_target(app, effect.increment.var, "increment")
    if effect.remove is not None:
        problems += _check_list(app, effect.remove.list, "remove")
        values.append(effect.remove.value)
    for name in effect.clear or []:
        problems += _check_var(app, name, "clear")
    if effect.set_var is not None:
        problems += _check_var(app, effect.set_var.var, "set")
        values.append(effect.set_var.value)
    for spec, what in ((effect.append, "append"), (effect.upsert, "upsert")):
        if spec is not None:
            problems += _check_list(app, spec.list, what)
            values.append(spec.item)
    for text in _strings(values):
        problems += _check_template(app, text)
    return problems
