"""A harness that runs tools on the simulated phone the way the agent does: observe the screen
through the state provider, then execute one call on a fresh ``ActionContext``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.tools.build import register_builtin_tools
from ufo_mobile.core.tools.context import ActionContext, ActionResult
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.tools.registry import ToolRegistry
from ufo_mobile.core.ui.cache import ControlCache
from ufo_mobile.core.ui.provider import AndroidStateProvider
from ufo_mobile.core.ui.state import UIState

PLAYGROUND = """
package: com.example.playground
label: Playground
start: main
state: {held: false, taps: 0}
screens:
  main:
    title: Playground
    body:
      - class: android.widget.Button
        id: press
        text: Hold me
        height: 200
        long_clickable: true
        on_tap: {set: {var: held, value: false}}
        on_long_press: {set: {var: held, value: true}}
"""


class Harness:
    """Executes tools against ``driver``; ``sleeps`` lists what ``wait`` asked to sleep."""

    def __init__(self, driver: DeviceDriver, *, credentials: CredentialManager | None = None,
                 registry: ToolRegistry | None = None, max_wait_seconds: float = 5.0) -> None:
        self.driver = driver
        self.credentials = credentials
        self.provider = AndroidStateProvider(driver)
        if registry is None:
            registry = ToolRegistry()
            register_builtin_tools(registry, credentials=credentials)
        self.registry = registry
        self.shared = SharedState()
        self.cache = ControlCache(ttl=5.0, clock=lambda: 0.0)
        self.sleeps: list[float] = []
        self.max_wait_seconds = max_wait_seconds
        self.ui: UIState | None = None
        self._reads = 0

    async def _sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    async def observe(self) -> UIState:
        self._reads += 1
        self.ui = await self.provider.get_state(observation_id=f"test-{self._reads}")
        return self.ui

    def index(self, label: str) -> int:
        """The first control labelled ``label`` (or with that resource id) on the last observed screen."""
        assert self.ui is not None, "observe first"
        for control in self.ui.elements:
            rid = control.node.resource_id
            if label in (control.label, control.description, control.hint) or rid.endswith(f"/{label}"):
                return control.index
        raise AssertionError(f"no control {label!r} on:\n{self.ui.formatted_text}")

    async def context(self) -> ActionContext:
        ui = await self.observe()
        apps = await self.driver.get_apps() if self.driver.supports("get_apps") else []
        return ActionContext(driver=self.driver, ui=ui, shared_state=self.shared, state_provider=self.provider,
                             credential_manager=self.credentials, cache=self.cache, apps=apps,
                             max_wait_seconds=self.max_wait_seconds, sleep=self._sleep)

    async def act(self, name: str, **args: Any) -> ActionResult:
        """Observe the current screen, then run ``name(**args)`` on it."""
        return await self.registry.execute(name, args, await self.context())

    async def texts(self) -> list[str]:
        ui = await self.observe()
        return [c.label for c in ui.elements if c.label]


@pytest.fixture
def sim() -> SimDriver:
    return SimDriver()


@pytest.fixture
def phone(sim: SimDriver) -> Harness:
    return Harness(sim)


def installed(tmp_path: Path, sim: SimDriver, app_yaml: str, package: str) -> SimDriver:
    """``sim`` with the app ``app_yaml`` installed and in front."""
    path = tmp_path / f"{package}.yaml"
    path.write_text(app_yaml, encoding="utf-8")
    sim.phone.install_app(path)
    sim.phone.start_app(package)
    return sim


@pytest.fixture
def playground(tmp_path: Path, sim: SimDriver) -> SimDriver:
    return installed(tmp_path, sim, PLAYGROUND, "com.example.playground")


FORM = """
package: com.example.form
label: Form
start: main
state: {name: "", email: "", city: "", street: "", query: ""}
screens:
  main:
    title: Sign up
    focus: name
    body:
      - {id: intro, text: Tell us about you}
      - {class: android.widget.EditText, id: name_field, bind: name, hint: Name}
      - class: com.google.android.material.textfield.TextInputLayout
        id: email_layout
        children:
          - {id: email_label, text: Email address}
          - {class: android.widget.EditText, id: email_field, bind: email}
      - class: android.widget.LinearLayout
        id: search_bar
        clickable: true
        desc: Search bar
        children:
          - {class: android.widget.EditText, id: search_field, bind: query, hint: Search}
      - class: android.widget.LinearLayout
        id: address
        clickable: true
        desc: Address
        children:
          - {class: android.widget.EditText, id: city_field, bind: city, hint: City}
          - {class: android.widget.EditText, id: street_field, bind: street, hint: Street}
      - class: android.widget.Button
        id: submit
        text: Submit
"""


@pytest.fixture
def form(tmp_path: Path, sim: SimDriver) -> SimDriver:
    """A sign-up form: a heading label, a field, a labelled field, a field in a row, two fields in one."""
    return installed(tmp_path, sim, FORM, "com.example.form")
