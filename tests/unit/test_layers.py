"""Imports point down only: the layers of ../shared/DESIGN.md, checked on every module's imports
(those made for type checking and inside functions included: a lazy import up is still a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ufo_mobile"

# higher layers may import lower ones (and their own); never the other way round
LAYERS: dict[str, int] = {
    "__main__": 101, "__init__": 100, "cli": 100,
    "host": 90, "fleet": 85, "eval": 85,
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
    "core": 0,
    "apk": 0, "output_settings": 0, "settings": 0, "errors": 0, "safe_text": 0, "yamlio": 0,
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
