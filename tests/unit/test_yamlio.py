"""Bounded YAML reading: bombs, cycles, deep nesting, bad bytes and big files are one-line errors.

No test measures time: a bomb test only has to finish (the unbounded code ran out of memory).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ufo_mobile import yamlio
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.errors import ConfigError, SimulatorError
from ufo_mobile.shipped import CONFIG_DIR
from ufo_mobile.sim.phone.loader import load_app_file, load_app_text
from ufo_mobile.yamlio import YamlLimits


def billion_laughs() -> str:
    """The classic shape: nine anchors, each a list of nine aliases of the one before (9**9 leaves)."""
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        yamlio.load_file(path)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(f"{path}:")
    return info.value


# --- alias expansion and cycles -------------------------------------------------------------------


def test_billion_laughs_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    bomb = write(tmp_path / "bomb.yaml", billion_laughs())
    assert 300 < bomb.stat().st_size < 600
    err = error_of(bomb)
    assert err.line is not None and 1 < err.line <= 9
    assert f"bomb.yaml:{err.line}: too many nodes" in str(err)
    assert f"the limit is {yamlio.MAX_NODES}" in str(err)
    with pytest.raises(ConfigError, match="too many nodes"):
        yamlio.compose_file(bomb)  # the node-returning entry point checks before returning


def test_bomb_in_a_mapping_and_under_a_merge_key(tmp_path: Path) -> None:
    text = billion_laughs().replace('"lol", ', "").replace('["lol"]', "{x: 1}")
    text += "j: {<<: *i}\n"
    assert "too many nodes" in str(error_of(write(tmp_path / "m.yaml", text)))


@pytest.mark.parametrize("text", ["a: &r [*r]\n", "a: &r {b: *r}\n", "a: &r [1, [2, {c: *r}]]\n"])
def test_self_reference(tmp_path: Path, text: str) -> None:
    err = error_of(write(tmp_path / "self.yaml", text))
    assert err.line == 1
    assert "alias *r refers to a node that contains it" in str(err)


def test_mutual_reference(tmp_path: Path) -> None:
    text = "top: 1\na: &x\n  - &y\n    - *x\n"
    err = error_of(write(tmp_path / "mutual.yaml", text))
    assert "alias *x refers to a node that contains it" in str(err)
    assert err.line == 2  # the anchor's line


def test_an_alias_of_an_earlier_sibling_is_no_cycle() -> None:
    assert yamlio.load_text("a: &r [1]\nb: [*r, *r]\n", "ok.yaml") == {"a": [1], "b": [[1], [1]]}


def test_text_multiplied_by_aliases_is_bounded() -> None:
    text = "a: &s '" + "x" * 30 + "'\nb: [*s, *s, *s, *s, *s]\n"
    with pytest.raises(ConfigError, match=r"^t.yaml:2: too much text: 150 characters"):
        yamlio.load_text(text, "t.yaml", limits=YamlLimits(max_text_chars=100))
    assert len(yamlio.load_text(text, "t.yaml")["b"]) == 5


def test_too_many_nodes_stops_while_composing() -> None:
    text = "items:\n" + "".join(f"  - {i}\n" for i in range(50))
    with pytest.raises(ConfigError, match=r"^big.yaml:\d+: too many nodes: more than 20 in the document$"):
        yamlio.load_text(text, "big.yaml", limits=YamlLimits(max_nodes=20))


# --- nesting --------------------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [100, 500])
def test_flow_nesting_stops_at_our_bound(tmp_path: Path, levels: int) -> None:
    """Deeper than our bound but within the parser's own (libyaml refuses 1000 levels and more)."""
    deep = write(tmp_path / "deep.yaml", "a: " + "[" * levels + "]" * levels + "\n")
    err = error_of(deep)
    assert f"nested more than {yamlio.MAX_DEPTH} levels deep" in str(err)
    assert err.line == 1


def test_flow_nesting_100k_deep_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    """Which bound speaks first (ours, or the YAML parser's own nesting limit) is the parser's
    business; the answer is one line naming the file and the line either way."""
    deep = write(tmp_path / "deep.yaml", "a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    err = error_of(deep)
    assert err.line == 1


def test_block_nesting(tmp_path: Path) -> None:
    text = "".join(" " * level + "k:\n" for level in range(1_000)) + " " * 1_000 + "v\n"
    err = error_of(write(tmp_path / "block.yaml", text))
    assert "nested more than" in str(err)
    assert err.line == yamlio.MAX_DEPTH  # where the first node too deep starts
    err = error_of(write(tmp_path / "dashes.yaml", "- " * 100_000 + "x\n"))
    assert "nested more than" in str(err)


def test_depth_reached_through_aliases(tmp_path: Path) -> None:
    """Each line is shallow; the expansion is 80 levels deep."""
    lines = ["l0: &l0 [x]"] + [f"l{n}: &l{n} [*l{n - 1}]" for n in range(1, 80)]
    err = error_of(write(tmp_path / "chain.yaml", "\n".join(lines) + "\n"))
    assert "nested more than" in str(err)
    assert err.line is not None


def test_nesting_within_the_limit_loads() -> None:
    depth = yamlio.MAX_DEPTH - 2  # the root mapping and the innermost scalar count too
    value = yamlio.load_text("a: " + "[" * depth + "1" + "]" * depth + "\n", "ok.yaml")["a"]
    for _ in range(depth):
        value = value[0]
    assert value == 1
    with pytest.raises(ConfigError, match="nested more than"):
        yamlio.load_text("a: " + "[" * (depth + 1) + "1" + "]" * (depth + 1) + "\n", "ok.yaml")


# --- bytes and size -------------------------------------------------------------------------------


def test_binary_file(tmp_path: Path) -> None:
    png = write(tmp_path / "bin.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    err = error_of(png)
    assert "not UTF-8 text (byte 0x89 at offset 0)" in str(err)
    assert err.line == 1


def test_latin1_file(tmp_path: Path) -> None:
    latin = write(tmp_path / "latin.yaml", "task: x\nname: café\n".encode("latin-1"))
    err = error_of(latin)
    assert str(err) == f"{latin}:2: not UTF-8 text (byte 0xe9 at offset 17)"


def test_nul_character(tmp_path: Path) -> None:
    err = error_of(write(tmp_path / "nul.yaml", "a: 1\nb: x\x00y\n"))
    assert "invalid YAML: unacceptable character #x0000" in str(err)
    assert err.line == 2


def test_utf8_bom_is_fine(tmp_path: Path) -> None:
    assert yamlio.load_file(write(tmp_path / "bom.yaml", "\ufeffa: é\n")) == {"a": "é"}


def test_oversize_file(tmp_path: Path) -> None:
    big = write(tmp_path / "big.yaml", b"#" * (yamlio.MAX_FILE_BYTES + 1))
    err = error_of(big)
    assert str(err) == (f"{big}: file too large: {yamlio.MAX_FILE_BYTES + 1} bytes, "
                        f"the limit is {yamlio.MAX_FILE_BYTES} bytes")


def test_text_in_hand_is_bounded_too() -> None:
    with pytest.raises(ConfigError, match=r"^t.yaml: text too large: 11 characters, the limit is 10$"):
        yamlio.load_text("a: 12345678", "t.yaml", limits=YamlLimits(max_bytes=10))


def test_missing_file(tmp_path: Path) -> None:
    assert str(error_of(tmp_path / "nope.yaml")).endswith(f"nope.yaml: cannot read: {os.strerror(errno.ENOENT)}")


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\n\n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    empty = write(tmp_path / "empty.yaml", text)
    assert yamlio.load_file(empty) is None
    assert yamlio.compose_file(empty) is None


# --- what must keep working -----------------------------------------------------------------------


def test_merge_keys_and_aliases_load_as_before() -> None:
    text = ("base: &base {x: 1, y: 2}\n"
            "more: &more {z: 3}\n"
            "one:\n  <<: *base\n  y: 20\n"
            "two:\n  <<: [*base, *more]\n  x: 10\n"
            "list: &l [a, b]\n"
            "again: *l\n")
    assert yamlio.load_text(text, "ok.yaml") == {
        "base": {"x": 1, "y": 2}, "more": {"z": 3},
        "one": {"x": 1, "y": 20}, "two": {"x": 10, "y": 2, "z": 3},
        "list": ["a", "b"], "again": ["a", "b"],
    }


def test_composed_nodes_keep_their_lines() -> None:
    root = yamlio.compose_text("a: 1\nb:\n  c: 2\n", "ok.yaml")
    assert root is not None
    (_, b_node) = root.value[1]
    assert b_node.value[0][0].start_mark.line + 1 == 3


# --- YAML errors stay one line --------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("a: [unclosed\n", "t.yaml:2: invalid YAML: "),  # a bare "invalid YAML: ": PyYAML's words follow
    ("a: !!int abc\n", "t.yaml:1: invalid YAML: cannot construct tag:yaml.org,2002:int from 'abc'"),
    ("a: !!bool maybe\n", "t.yaml:1: invalid YAML: cannot construct tag:yaml.org,2002:bool"),
    ('a: !!int "1\\n2"\n', "t.yaml:1: invalid YAML: cannot construct tag:yaml.org,2002:int from '1\\n2'"),
    ("a: !!python/object:os.system x\n", "t.yaml:1: invalid YAML: "),
    ("a: *nope\n", "t.yaml:1: invalid YAML: "),
    ("a: 1\n---\nb: 2\n", "t.yaml:2: invalid YAML: "),
    ("a: &x 1\nb: &x 2\n", "t.yaml:2: invalid YAML: "),
    ("a:\tb: c\n", "t.yaml:1: invalid YAML: "),
])
def test_yaml_errors_are_one_line(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        yamlio.load_text(text, "t.yaml")
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(expected) and str(info.value).removeprefix(expected).strip()


def test_yaml_problems_are_printed_safely_and_bounded(tmp_path: Path) -> None:
    err = str(error_of(write(tmp_path / "ctl.yaml", "a: [" + "\x1b" + "]\n")))
    assert "\x1b" not in err and "\n" not in err


# --- the callers ----------------------------------------------------------------------------------


def test_scripted_model_file_is_bounded(tmp_path: Path) -> None:
    bomb = write(tmp_path / "script.yaml", billion_laughs())
    with pytest.raises(ConfigError, match=r"script\.yaml:\d+: too many nodes"):
        ScriptedModel.from_file(bomb)
    binary = write(tmp_path / "bin.yaml", b"replies: [\xff]\n")
    with pytest.raises(ConfigError, match=r"bin\.yaml:1: not UTF-8 text \(byte 0xff at offset 10\)"):
        ScriptedModel.from_file(binary)


def test_sim_app_files_are_bounded(tmp_path: Path) -> None:
    with pytest.raises(SimulatorError, match=r"^app\.yaml:\d+: too many nodes") as info:
        load_app_text(billion_laughs(), "app.yaml")
    assert "\n" not in str(info.value)
    with pytest.raises(SimulatorError, match=r"^app\.yaml:1: alias \*r refers"):
        load_app_text("package: &r [*r]\n", "app.yaml")
    binary = write(tmp_path / "bin.yaml", b"\x00\xff\xfe")
    with pytest.raises(SimulatorError, match=r"bin\.yaml:1: cannot read app file: not UTF-8 text \(byte 0xff"):
        load_app_file(binary)


def test_events_come_from_libyaml_and_match_the_pure_python_parser() -> None:
    """The fast C event source is the one used (PyYAML's wheels ship libyaml), and it yields the same
    events, with the same lines, as the pure-Python source kept for a PyYAML built without it."""
    import yaml as _yaml

    from ufo_mobile import yamlio

    if not _yaml.__with_libyaml__:
        pytest.skip("this PyYAML was built without libyaml")
    assert yamlio._Events is yamlio._Parser
    text = (CONFIG_DIR / "default.yaml").read_text()

    def events(source: object) -> list[tuple[str, object, int]]:
        found = []
        while source.check_event():  # type: ignore[attr-defined]
            event = source.get_event()  # type: ignore[attr-defined]
            found.append((type(event).__name__, getattr(event, "value", None), event.start_mark.line))
        return found

    assert events(yamlio._Parser(text)) == events(yamlio._PythonEvents(text))
