"""The command line explains itself: ``--version``, a line of help for every command in the list and a
description in its own ``--help``, help text for every option, and ``run``'s synopsis (its usage
line and the one in docs/running.md) naming every option it takes."""

from __future__ import annotations

import argparse
import configparser
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import ufo_mobile
from ufo_mobile.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def commands(parser: argparse.ArgumentParser, path: str = "") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(the command's words, its parser) for the parser and every command below it."""
    yield path or "(top)", parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}".strip())


def subcommand_lists(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str, str | None]]:
    """(the parent, the command, its line in the parent's list) for every command."""
    for where, each in commands(parser):
        for action in each._actions:
            if isinstance(action, argparse._SubParsersAction):
                lines = {choice.dest: choice.help for choice in action._choices_actions}
                for name in action.choices:
                    yield where, name, lines.get(name)


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"ufo_mobile {ufo_mobile.__version__}\n"


def test_the_package_version_is_the_one_source() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    assert config["metadata"]["version"] == "attr: ufo_mobile.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+", ufo_mobile.__version__)


def test_every_command_has_a_line_in_the_list_and_a_description() -> None:
    parser = build_parser()
    listed = list(subcommand_lists(parser))
    assert {name for _, name, _ in listed} >= {"run", "devices", "sim", "config", "batch", "mcp"}
    no_line = [f"{where}: {name}" for where, name, line in listed if not line or line == argparse.SUPPRESS]
    assert not no_line, f"commands without a line in their parent's --help list: {no_line}"
    no_description = [where for where, each in commands(parser) if not each.description]
    assert not no_description, f"commands whose --help describes nothing: {no_description}"


def test_every_option_has_help_text() -> None:
    missing = [f"{where}: {'/'.join(action.option_strings) or action.dest}"
               for where, each in commands(build_parser()) for action in each._actions
               if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
               and (not action.help or action.help == argparse.SUPPRESS)]
    assert not missing, f"arguments without help text: {missing}"


def run_options() -> list[str]:
    run = dict(commands(build_parser()))["run"]
    return [option for action in run._actions if not isinstance(action, argparse._HelpAction)
            for option in action.option_strings if option.startswith("--")]


def test_runs_usage_line_shows_every_option() -> None:
    usage = dict(commands(build_parser()))["run"].format_usage()
    assert "--mode" in run_options() and "--resume" in run_options()
    missing = [option for option in run_options() if option not in usage]
    assert not missing, f"run's usage leaves out {missing}: {usage}"


def test_runs_synopsis_in_the_docs_shows_every_option() -> None:
    text = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
    synopsis = text.split("```", 2)[1]  # the first code block: the commands and their options
    assert "python -m ufo_mobile run TASK.yaml" in synopsis
    missing = [option for option in run_options() if not re.search(rf"{re.escape(option)}\b", synopsis)]
    assert not missing, f"docs/running.md's run synopsis leaves out {missing}"
