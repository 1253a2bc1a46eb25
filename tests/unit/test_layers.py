"""Imports point down only: the layers of docs/architecture.md, checked on every module's imports
(those made for type checking and inside functions included: a lazy import up is still a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ufo_mobile"

# higher layers may import lower ones (and their own); never the other way round
LAYERS: dict[str, int] = {
    "__main__": 101, "__init__": 100, "cli": 100,
    "api": 95,
    "host": 90, "fleet": 85, "eval": 85,
    "core.builder": 78,
    "core.session": 80,
    "report": 75,
    "core.agents": 70,
    "core.states": 60,
    "core.context": 55,
    "core.processors": 50,
    "core.phone": 47,
    "core.tools": 45,
    "replay": 42,
    "core.llm": 40,
    "core.ui": 35,
    "core.device": 30,
    "sim": 25,
    "core.sandbox": 20,
    "core.memory": 15,
    "core.trace": 12,
    "core.prompts": 10,
    "shipped": 5,
    "core.status": 0,
    "core.keycodes": 0, "core.ios_types": 0,
    "core": 0,
    "apk": 0, "output_settings": 0, "settings": 0, "errors": 0, "safe_text": 0, "yamlio": 0, "lazy": 0,
    "secret_env": 0,
}


def group_of(parts: tuple[str, ...] | list[str]) -> str:
    """The layer a module belongs to: its top-level package, or ``core.<package>`` inside the core."""
    head = parts[0].removesuffix(".py")
    if head == "core" and len(parts) > 1 and parts[1] != "__init__.py":
        return f"core.{parts[1].removesuffix('.py')}"
    return head


def layer_of(module: str) -> str:
    parts = module.split(".")
    return group_of(parts[1:]) if len(parts) > 1 else "__init__"


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py"))


def imports_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names] if node.module == "ufo_mobile" else [node.module]
            found += [(node.lineno, n) for n in names if n.startswith("ufo_mobile.")]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("ufo_mobile.")]
    return found


def test_every_package_has_a_layer() -> None:
    tops = {group_of(p.relative_to(PACKAGE).parts) for p in modules()}
    assert tops <= set(LAYERS), sorted(tops - set(LAYERS))


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    rel = path.relative_to(PACKAGE)
    own = group_of(rel.parts)
    upward = [f"line {line}: {target}" for line, target in imports_of(path)
              if LAYERS[layer_of(target)] > LAYERS[own]]
    assert not upward, f"{rel} imports up: {upward}"


# Inside some packages the same rule holds between their parts: a module may import its own part
# and lower ones, never a higher one, nor a sibling on its own level. The simulated phone is under
# the Android system it runs in, and that under the servers that speak adb and uiautomator2; the
# host's MCP server and AIP service stand side by side over the in-process API; a settings section
# imports no other section.
SUBLAYERS: dict[str, dict[str, int]] = {
    "sim": {"phone": 0, "android": 1, "servers": 2, "__init__": 3},
    "host": {"inprocess": 0, "mcp": 1, "aip": 1, "__init__": 2},
    "settings": {"strict": 0, "merge": 0,
                 "model": 1, "device": 1, "agent": 1, "tools": 1, "modes": 1, "run": 1,
                 "root": 2, "document": 2, "user": 2, "loading": 3, "__init__": 4},
}


def part_of(package: str, inner: tuple[str, ...] | list[str]) -> str:
    """The part of ``package`` that the path (or dotted name) ``inner`` below it is in: its first
    component when that is a part, else the package's ``__init__`` (a name it exports)."""
    head = inner[0].removesuffix(".py") if inner else "__init__"
    return head if head in SUBLAYERS[package] else "__init__"


def imports_within(path: Path, package: str) -> list[tuple[int, list[str]]]:
    """The imports of ``path`` from ``ufo_mobile.<package>``, each as the dotted path below it
    (``from ufo_mobile.sim import phone`` is ``["phone"]``)."""
    prefix = f"ufo_mobile.{package}"
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == prefix:
                found += [(node.lineno, [a.name]) for a in node.names]
            elif node.module.startswith(prefix + "."):
                found.append((node.lineno, node.module.split(".")[2:]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[2:]) for a in node.names
                      if a.name == prefix or a.name.startswith(prefix + ".")]
    return found


def test_every_part_has_a_layer() -> None:
    for package, parts in SUBLAYERS.items():
        named = {p.relative_to(PACKAGE / package).parts[0].removesuffix(".py")
                 for p in (PACKAGE / package).rglob("*.py")}
        assert named == set(parts), (package, sorted(named ^ set(parts)))  # each part named, none left over


@pytest.mark.parametrize("path", [p for p in modules() if p.relative_to(PACKAGE).parts[0] in SUBLAYERS],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_inside_a_package_point_down(path: Path) -> None:
    rel = path.relative_to(PACKAGE)
    package, parts = rel.parts[0], SUBLAYERS[rel.parts[0]]
    own = part_of(package, rel.parts[1:])
    wrong = [f"line {line}: {'.'.join([package, *inner])}" for line, inner in imports_within(path, package)
             if part_of(package, inner) != own and parts[part_of(package, inner)] >= parts[own]]
    assert not wrong, f"{rel} imports up or sideways: {wrong}"
