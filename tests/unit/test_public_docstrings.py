"""Every public name a user of the library reaches has a docstring, so ``help()`` answers.

The library surface is listed in ``SURFACE``: the session and its result, the settings, the states
and the errors, the agents, the phone drivers, the run builder, the model port, the tool registry,
the in-process host and the entry points of ``eval`` and ``batch``. In each listed module, every
class and function defined there (imported names are the other module's business) whose name does
not start with ``_`` needs a docstring, and so does every public method and property of those
classes; a method that overrides a documented one of a base class may share its docstring, as
``help()`` shows it then. Every field of a settings section has a description
(``Field(description=...)``), and ``RunResult``'s docstring names each of its fields. Constants and
type aliases cannot carry a docstring at run time and are not checked.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic
import pytest

from ufo_mobile.core.session.result import RunResult

SURFACE: tuple[str, ...] = (
    # a run: Session, RunResult, the round loop and how a run is stopped
    "ufo_mobile.core.session.loop",
    "ufo_mobile.core.session.result",
    "ufo_mobile.core.session.session",
    "ufo_mobile.core.session.signals",
    # the settings, and where they are loaded from (the user config: user.py); a goal in one call (api.py)
    "ufo_mobile.api",
    "ufo_mobile.settings.loading",
    "ufo_mobile.settings.user",
    "ufo_mobile.settings.agent",
    "ufo_mobile.settings.device",
    "ufo_mobile.settings.document",
    "ufo_mobile.settings.merge",
    "ufo_mobile.settings.model",
    "ufo_mobile.settings.modes",
    "ufo_mobile.settings.root",
    "ufo_mobile.settings.run",
    "ufo_mobile.settings.tools",
    # the states, their statuses and the errors (``ufo_mobile`` exports them)
    "ufo_mobile.core.states.base",
    "ufo_mobile.core.states.mobile",
    "ufo_mobile.core.status",
    "ufo_mobile.core.memory.execution",
    "ufo_mobile.errors",
    # the agents, what they share in a run (context.py) and what it reports live (progress.py)
    "ufo_mobile.core.agents.base",
    "ufo_mobile.core.agents.codeact",
    "ufo_mobile.core.agents.factory",
    "ufo_mobile.core.agents.human",
    "ufo_mobile.core.agents.limits",
    "ufo_mobile.core.agents.mobile",
    "ufo_mobile.core.agents.options",
    "ufo_mobile.core.agents.reasoning",
    "ufo_mobile.core.agents.scripter",
    "ufo_mobile.core.agents.replay",
    "ufo_mobile.core.context",
    "ufo_mobile.core.trace.progress",
    # the phone: the driver protocol, the drivers and their wrappers, and the live phone
    "ufo_mobile.core.device.adb",
    "ufo_mobile.core.device.adb_apps",
    "ufo_mobile.core.device.adb_base",
    "ufo_mobile.core.device.adb_dump",
    "ufo_mobile.core.device.adb_screen",
    "ufo_mobile.core.device.adb_text",
    "ufo_mobile.core.device.base",
    "ufo_mobile.core.device.blocking",
    "ufo_mobile.core.device.choice",
    "ufo_mobile.core.device.discovery",
    "ufo_mobile.core.device.dumpsys",
    "ufo_mobile.core.device.factory",
    "ufo_mobile.core.device.labels",
    "ufo_mobile.core.device.local_adb",
    "ufo_mobile.core.device.recording",
    "ufo_mobile.core.device.sim",
    "ufo_mobile.core.device.stealth",
    "ufo_mobile.core.device.u2",
    "ufo_mobile.core.device.uixml",
    "ufo_mobile.core.device.wrappers",
    "ufo_mobile.core.phone",
    # building a run
    "ufo_mobile.core.builder.parts",
    "ufo_mobile.core.builder.run_builder",
    "ufo_mobile.core.builder.start",
    # the model port and its clients (openai_chat.py, scripted.py)
    "ufo_mobile.core.llm.base",
    "ufo_mobile.core.llm.openai_chat",
    "ufo_mobile.core.llm.scripted",
    # the tools (args.py is left out: an argument model's docstring would reach the model's prompt)
    "ufo_mobile.core.tools.build",
    "ufo_mobile.core.tools.context",
    "ufo_mobile.core.tools.credentials",
    "ufo_mobile.core.tools.registry",
    # a host running the agent in its own process
    "ufo_mobile.host.inprocess",
    # batch and eval, with their progress views, records and tables
    "ufo_mobile.fleet.archive",
    "ufo_mobile.fleet.batch",
    "ufo_mobile.fleet.devices",
    "ufo_mobile.fleet.jobs",
    "ufo_mobile.fleet.local",
    "ufo_mobile.fleet.pool",
    "ufo_mobile.fleet.progress",
    "ufo_mobile.fleet.results",
    "ufo_mobile.fleet.ray_engine",
    "ufo_mobile.fleet.resources",
    "ufo_mobile.fleet.runner",
    "ufo_mobile.fleet.scheduler",
    "ufo_mobile.eval.campaign",
    "ufo_mobile.eval.checks",
    "ufo_mobile.eval.doc",
    "ufo_mobile.eval.loader",
    "ufo_mobile.eval.match",
    "ufo_mobile.eval.page",
    "ufo_mobile.eval.live",
    "ufo_mobile.eval.params",
    "ufo_mobile.eval.results",
    "ufo_mobile.eval.table",
    "ufo_mobile.eval.runner",
    "ufo_mobile.eval.spec",
    "ufo_mobile.eval.template",
)

SETTINGS_SECTIONS = tuple(name for name in SURFACE if name.startswith("ufo_mobile.settings."))


def own_docstrings(module: ModuleType) -> set[str]:
    """The qualified names of the classes and functions the module's source gives a docstring."""
    tree = ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                if ast.get_docstring(node):
                    found.add(prefix + node.name)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def public_definitions(module: ModuleType) -> list[tuple[str, Any]]:
    """The module's public classes and functions, those defined in it (not imported)."""
    return [(name, obj) for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
            and obj.__module__ == module.__name__]


def public_members(cls: type) -> list[tuple[str, Any]]:
    """The public methods and properties defined in the class's body (not a function defined
    elsewhere and kept as a class attribute, such as a dataclass field's default)."""
    members = []
    for name, member in vars(cls).items():
        target = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
        function = target.fget if isinstance(target, property) else target
        if (not name.startswith("_") and inspect.isfunction(function)
                and function.__qualname__ == f"{cls.__qualname__}.{name}"):
            members.append((name, target))
    return members


def inherited_doc(cls: type, name: str) -> bool:
    """Whether a base class documents the member ``name`` that ``cls`` overrides."""
    for base in cls.__mro__[1:]:
        member = vars(base).get(name)
        if member is not None:
            target = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
            return bool(inspect.getdoc(target))
    return False


def undocumented(module: ModuleType) -> list[str]:
    """Every public name of the module that lacks a docstring."""
    module_name = module.__name__
    documented = own_docstrings(module)
    missing = [] if (module.__doc__ or "").strip() else [f"{module_name} (the module)"]
    for name, obj in public_definitions(module):
        if name not in documented:
            missing.append(f"{module_name}.{name}")
        if inspect.isclass(obj):
            missing += [f"{module_name}.{name}.{member}" for member, _ in public_members(obj)
                        if f"{name}.{member}" not in documented and not inherited_doc(obj, member)]
    return missing


@pytest.mark.parametrize("module_name", SURFACE)
def test_every_public_name_has_a_docstring(module_name: str) -> None:
    missing = undocumented(importlib.import_module(module_name))
    assert not missing, "no docstring: " + ", ".join(missing)


def undescribed_fields(module: ModuleType) -> list[str]:
    """The fields without a description of the module's pydantic models (those each model declares)."""
    return [f"{module.__name__}.{name}.{field}" for name, cls in public_definitions(module)
            if inspect.isclass(cls) and issubclass(cls, pydantic.BaseModel)
            for field, info in cls.model_fields.items()
            if field in vars(cls).get("__annotations__", {}) and not info.description]


@pytest.mark.parametrize("module_name", SETTINGS_SECTIONS)
def test_every_settings_field_has_a_description(module_name: str) -> None:
    missing = undescribed_fields(importlib.import_module(module_name))
    assert not missing, "no Field(description=...): " + ", ".join(missing)


def test_the_run_results_docstring_names_every_field() -> None:
    doc = RunResult.__doc__ or ""
    missing = [f.name for f in dataclasses.fields(RunResult) if f"``{f.name}``" not in doc]
    assert not missing, "RunResult's docstring does not name: " + ", ".join(missing)


SAMPLE = '''
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field


class Base:
    """Documented."""

    def act(self) -> None:
        """Documented here, and for every override."""


class Bare(Base):
    def act(self) -> None:
        pass

    def method(self) -> None:
        pass

    @property
    def size(self) -> int:
        return 0

    def _private(self) -> None:
        pass


@dataclass
class Record:
    name: str


class Section(BaseModel):
    """Documented; one field is not."""

    told: int = Field(default=1, description="described")
    untold: int = 2


class Wider(Section):
    """Only its own field is its business."""

    more: int = Field(default=3, description="described")


def bare() -> None:
    pass


def _hidden() -> None:
    pass
'''


def load_sample(tmp_path: Path) -> ModuleType:
    """``SAMPLE`` as a module of its own."""
    path = tmp_path / "undocumented_sample.py"
    path.write_text(SAMPLE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("undocumented_sample", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_missing_docstring_is_named(tmp_path: Path) -> None:
    """The check itself: undocumented classes (a dataclass too), methods, properties and functions
    are named; private names, imported ones and documented overrides are not."""
    assert undocumented(load_sample(tmp_path)) == [
        "undocumented_sample (the module)",
        "undocumented_sample.Bare",
        "undocumented_sample.Bare.method",
        "undocumented_sample.Bare.size",
        "undocumented_sample.Record",
        "undocumented_sample.bare",
    ]


def test_a_field_without_a_description_is_named(tmp_path: Path) -> None:
    assert undescribed_fields(load_sample(tmp_path)) == ["undocumented_sample.Section.untold"]
