"""The docs point at what exists: every file path and every ``ufo_mobile.`` name that README.md,
docs/*.md and the package's docstrings and comments mention is there (so moving a file without
updating what names it fails here), every link between the docs lands on a file and a heading, the
drawing of the layers in docs/architecture.md agrees with ``tests/unit/test_layers.py``, and the
README stays a short first page (docs/ holds the rest)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import io
import re
import tokenize
from pathlib import Path

import pytest

from tests.unit.test_layers import LAYERS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ufo_mobile"
DOCS = ROOT / "docs"

#: A path from the repository's root: a top folder of the project, then path characters (a glob or
#: a ``<placeholder>`` ends it, so ``ufo_mobile/sim/apps/*.yaml`` checks the folder). Not after a
#: path character, so ``~/.cache/ufo_mobile/labels`` is not taken for one.
PATH = re.compile(r"(?<![\w./~-])((?:ufo_mobile|docs|tests|bench|examples|\.ci)/[\w./-]*[\w/])")
#: A markdown file named anywhere (``see DESIGN.md``).
MARKDOWN = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.md)\b")
#: A dotted name in the package (``ufo_mobile.core.device.sim.SimDriver``).
DOTTED = re.compile(r"(?<![\w./-])(ufo_mobile(?:\.\w+)+)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def module_texts(path: Path) -> list[str]:
    """A module's docstrings (every string statement: module, class, function, attribute) and
    comments: the prose of the package, where a path or a name is a reference."""
    source = path.read_text(encoding="utf-8")
    texts = [node.value.value for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
             and isinstance(node.value.value, str)]
    texts += [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
              if tok.type == tokenize.COMMENT]
    return texts


def prose() -> list[tuple[str, str]]:
    """(where, text) for the README, each doc and each module of the package."""
    found = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in doc_files()]
    for path in sorted(PACKAGE.rglob("*.py")):
        found += [(str(path.relative_to(ROOT)), text) for text in module_texts(path)]
    return found


def outside_fences(text: str) -> str:
    """The text with fenced code blocks left out (a ``# comment`` there is no heading)."""
    kept, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            kept.append(line)
    return "\n".join(kept)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for line in outside_fences(path.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"^#{1,6} (.+)$", line)
        if match:
            base = slug(match.group(1))
            name, n = base, 0
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def resolves(dotted: str) -> bool:
    """A module, or an attribute reached from the longest importable module in the name."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            continue
        target: object = importlib.import_module(name)
        for attr in parts[cut:]:
            if not hasattr(target, attr):
                return False
            target = getattr(target, attr)
        return True
    return False


def test_the_readme_is_a_short_first_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 300, f"README.md has {len(lines)} lines: move the detail to a page of docs/"
    assert (DOCS / "architecture.md").is_file()


def test_every_path_named_exists() -> None:
    missing = sorted({f"{where}: {path}" for where, text in prose() for path in PATH.findall(text)
                      if not (ROOT / path).exists()})
    assert not missing, "named but not there:\n" + "\n".join(missing)


def test_every_markdown_file_named_in_the_package_exists() -> None:
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for text in module_texts(path):
            missing += [f"{path.relative_to(ROOT)}: {name}" for name in MARKDOWN.findall(text)
                        if not (ROOT / name).is_file()]
    assert not missing, "a docstring points at a file that is not in the repository:\n" + "\n".join(missing)


def test_every_dotted_name_resolves() -> None:
    names = {(where, name) for where, text in prose() for name in DOTTED.findall(text)}
    missing = sorted(f"{where}: {name}" for where, name in names if not resolves(name))
    assert not missing, "no such module or attribute:\n" + "\n".join(missing)


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_links_between_the_docs_land(doc: Path) -> None:
    broken = []
    for target in LINK.findall(outside_fences(doc.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):
            continue  # a web address
        file_part, _, anchor = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading #{anchor} in {path.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def drawn_layers() -> list[list[str]]:
    """The layers as architecture.md draws them, top first: per line of the drawing, the layer keys
    of ``tests/unit/test_layers.py`` it names (``core/states/`` is ``core.states``)."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"## The layers\n.*?```\n(.*?)```", text, re.S)
    assert block is not None, "architecture.md draws the layers in a code block under '## The layers'"
    rows = []
    for line in block.group(1).splitlines():
        if line[:1].isspace() or not line.strip():
            continue  # a description carried over from the line above
        names = re.split(r"\s{3,}", line, maxsplit=1)[0].split()
        rows.append([name.rstrip("/").removesuffix(".py").replace("/", ".") for name in names])
    return rows


def test_the_drawing_of_the_layers_matches_the_layers_test() -> None:
    rows = drawn_layers()
    drawn = {name for row in rows for name in row}
    undrawn = sorted(set(LAYERS) - drawn - {"__init__", "core"})
    assert not undrawn, f"architecture.md does not draw these layers of test_layers.py: {undrawn}"
    above = max(LAYERS.values())
    for row in rows:
        levels = [LAYERS[name] for name in row if name in LAYERS]
        assert all(level <= above for level in levels), f"architecture.md draws {row} above a lower layer"
        above = min([above, *levels])


def test_every_doc_is_reachable_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    unlinked = [p.name for p in DOCS.glob("*.md") if p.name != "README.md" and f"](docs/{p.name}" not in readme]
    assert not unlinked, f"README.md links no page of: {unlinked}"
