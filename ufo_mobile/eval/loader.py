"""Load suite tasks: strict, with one-line errors naming the file, line and key.

A suite is a folder of task files (``*.yaml`` directly in it, one task each, named after the task's
id) with their oracle scripts under ``scripts/``. Beyond the schema, loading checks what the schema
cannot see, against the shipped simulator apps: every app named is shipped (and installed by the
setup, unless preinstalled), every state variable set or checked is declared by its app, and one
variant of the task (seed 0) renders: placeholders name parameters, the check and the oracle
script are valid once filled in.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from ufo_mobile.errors import ConfigError, SimulatorError, first_problem
from ufo_mobile.eval.checks import AnswerCheck, StateCheck, StateRef, walk
from ufo_mobile.eval.doc import Doc
from ufo_mobile.eval.spec import SuiteTask, TaskInstance, TaskSpec
from ufo_mobile.sim.phone.loader import builtin_apps, packaged_app
from ufo_mobile.sim.phone.model import App


def load_task(path: Path) -> SuiteTask:
    """One task file. Raises ``ConfigError`` (one line: file, line, key, message)."""
    doc = Doc(path)
    if not isinstance(doc.data, dict):
        raise doc.error("a task file must be a mapping with id, app, text, budget and check", ())
    try:
        spec = TaskSpec.model_validate(doc.data)
    except ValidationError as exc:
        key, message = first_problem(exc)
        raise doc.error(message, key) from None
    if spec.id != path.stem:
        raise doc.error(f"the id must be the file's name without .yaml ({path.stem!r})", ("id",))
    if spec.expect == "finish" and spec.check is None:
        raise doc.error("a task that can be done needs a check on the phone's state or answer", ("check",))
    task = SuiteTask(spec, doc, _oracle_doc(spec, doc))
    _check_apps(task, task.instantiate(0))
    return task


def load_suite(folder: Path) -> list[SuiteTask]:
    """Every task of a suite folder, by id. Raises ``ConfigError`` for the first bad file."""
    if not folder.is_dir():
        raise ConfigError("not a folder of task files", path=str(folder))
    tasks = [load_task(path) for path in sorted(folder.glob("*.yaml"))]
    if not tasks:
        raise ConfigError("no task files (*.yaml) in the folder", path=str(folder))
    return sorted(tasks, key=lambda task: task.id)


def _oracle_doc(spec: TaskSpec, doc: Doc) -> Doc | None:
    """The oracle script's file: the one named, else ``scripts/<id>.yaml`` if there is one."""
    if spec.oracle is None:
        default = doc.path.parent / "scripts" / f"{spec.id}.yaml"
        return Doc(default) if default.is_file() else None
    path = Path(spec.oracle).expanduser()
    path = path if path.is_absolute() else doc.path.parent / path
    if not path.is_file():
        raise doc.error(f"no oracle script at {path}", ("oracle",))
    return Doc(path)


def _apps(task: SuiteTask) -> dict[str, App]:
    """The apps the task's phone has: the preinstalled ones and those its setup installs."""
    apps = {app.package: app for app in builtin_apps()}
    for index, package in enumerate(task.spec.setup.install):
        try:
            apps[package] = packaged_app(package)
        except SimulatorError:
            raise task.doc.error(f"no shipped app {package!r} (ufo_mobile/sim/apps)",
                                 ("setup", "install", str(index))) from None
    return apps


def _check_apps(task: SuiteTask, instance: TaskInstance) -> None:
    """Apps and state variables named by the setup and the check exist."""
    apps = _apps(task)
    spec, doc = task.spec, task.doc
    if spec.app not in apps:
        raise doc.error(_not_installed(spec.app), ("app",))
    if spec.setup.start_app is not None and spec.setup.start_app not in apps:
        raise doc.error(_not_installed(spec.setup.start_app), ("setup", "start_app"))
    for package, values in spec.setup.state.items():
        if package not in apps:
            raise doc.error(_not_installed(package), ("setup", "state", package))
        _known_variables(doc, apps[package], values, ("setup", "state", package))
    for part in walk(instance.check) if instance.check is not None else []:
        ref = part if isinstance(part, StateCheck) else part.answer if isinstance(part, AnswerCheck) else None
        if isinstance(ref, (StateCheck, StateRef)):
            package = ref.app or spec.app
            if package not in apps:
                raise doc.error(_not_installed(package), ("check",))
            name = ref.path.split(".")[0]
            if name not in apps[package].state:
                raise doc.error(_unknown_variable(apps[package], name), ("check",))


def _known_variables(doc: Doc, app: App, names: Iterable[str], at: tuple[str, ...]) -> None:
    for name in names:
        if name not in app.state:
            raise doc.error(_unknown_variable(app, name), (*at, name))


def _unknown_variable(app: App, name: str) -> str:
    return f"{app.package} has no state variable {name!r} (it has: {', '.join(app.state) or 'none'})"


def _not_installed(package: str) -> str:
    return f"app {package!r} is not on the phone (preinstalled apps, and setup.install for the other shipped ones)"
