"""Fixtures for the simulated phone tests: a fresh phone and an XML-driven screen reader."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from lxml import etree

from ufo_mobile.sim.phone.simphone import SimPhone

PLAYGROUND = """
package: com.example.playground
label: Playground
start: main
state: {long: false, secret: "", name: "", log: [], clicks: 0}
screens:
  main:
    title: Playground
    body:
      - class: android.widget.Button
        id: press
        text: Press me
        height: 160
        on_tap: {set: {var: long, value: false}}
        on_long_press: {set: {var: long, value: true}}
      - {class: android.widget.EditText, id: secret, bind: secret, hint: Password, password: true}
      - class: android.widget.EditText
        id: name
        bind: name
        hint: Your name
        submit: {append: {list: log, item: "{name}"}}
      - {class: android.widget.Button, text: Open missing, on_tap: {launch: com.example.missing}}
      - {class: android.widget.Button, text: Disabled, enabled: false, on_tap: {set: {var: long, value: true}}}
"""


class Screen:
    """Reads the phone's uiautomator XML like an agent and taps nodes at their XML bounds."""

    def __init__(self, phone: SimPhone) -> None:
        self.phone = phone

    def root(self) -> etree._Element:
        return etree.fromstring(self.phone.dump_hierarchy().encode("utf-8"))

    def nodes(self) -> list[etree._Element]:
        return list(self.root().iter("node"))

    def find(self, text: str | None = None, desc: str | None = None, cls: str | None = None,
             rid: str | None = None) -> etree._Element | None:
        for node in self.nodes():
            if text is not None and node.get("text") != text:
                continue
            if desc is not None and node.get("content-desc") != desc:
                continue
            if cls is not None and node.get("class") != cls:
                continue
            if rid is not None and not node.get("resource-id", "").endswith(rid):
                continue
            return node
        return None

    def texts(self) -> list[str]:
        return [node.get("text", "") for node in self.nodes() if node.get("text")]

    def node(self, **query: str) -> etree._Element:
        found = self.find(**query)
        assert found is not None, f"no node {query} on screen {self.phone.current_screen()}: {self.texts()}"
        return found

    def tap(self, **query: str) -> None:
        x, y = self.center(self.node(**query))
        self.phone.tap(x, y)

    @staticmethod
    def bounds(node: etree._Element) -> tuple[int, int, int, int]:
        left, top, right, bottom = (int(v) for v in re.findall(r"-?\d+", node.get("bounds", "")))
        return left, top, right, bottom

    @staticmethod
    def center(node: etree._Element) -> tuple[int, int]:
        left, top, right, bottom = Screen.bounds(node)
        return (left + right) // 2, (top + bottom) // 2


@pytest.fixture
def phone() -> SimPhone:
    return SimPhone()


@pytest.fixture
def ui(phone: SimPhone) -> Screen:
    return Screen(phone)


@pytest.fixture
def screen_of() -> Callable[[SimPhone], Screen]:
    """Build a ``Screen`` reader for another phone."""
    return Screen


@pytest.fixture
def playground(tmp_path: Path, phone: SimPhone) -> SimPhone:
    path = tmp_path / "playground.yaml"
    path.write_text(PLAYGROUND, encoding="utf-8")
    phone.install_app(path)
    phone.start_app("com.example.playground")
    return phone
