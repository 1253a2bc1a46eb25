"""Fixtures for the ui tests: the shared corpus of real uiautomator dumps (never copied here)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "ui_dumps"
_MISSING = "<ui_dumps corpus missing>"


def corpus_names() -> list[str]:
    return sorted(p.name for p in CORPUS.glob("*.xml")) if CORPUS.is_dir() else []


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that takes ``dump_name`` once per dump of the corpus."""
    if "dump_name" in metafunc.fixturenames:
        metafunc.parametrize("dump_name", corpus_names() or [_MISSING])


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir() or not corpus_names():
        pytest.skip(f"real dump corpus not found at {CORPUS.resolve()} (../shared/data/ui_dumps)")
    return CORPUS


@pytest.fixture
def load_dump(corpus: Path) -> Callable[[str], bytes]:
    def load(name: str) -> bytes:
        path = corpus / name
        if not path.is_file():
            pytest.skip(f"{name} is not in the dump corpus at {corpus.resolve()}")
        return path.read_bytes()

    return load
