"""App files: the shipped apps validate; bad files fail with the file and the field named."""

from __future__ import annotations

from pathlib import Path

import pytest

from ufo_mobile.errors import SimulatorError
from ufo_mobile.sim.phone.loader import builtin_apps, load_app_file, load_app_text
from ufo_mobile.sim.phone.simphone import SimPhone

MINIMAL = """
package: com.example.mini
label: Mini
start: main
state: {count: 0, lit: false}
screens:
  main:
    title: Mini
    body:
      - {class: android.widget.Button, text: Toggle, on_tap: {toggle: lit}}
"""


def test_shipped_apps_load_with_labels() -> None:
    apps = {app.package: app for app in builtin_apps()}
    assert list(apps) == ["com.android.launcher3", "com.android.settings", "com.android.contacts",
                          "com.google.android.apps.messaging", "com.example.notes"]
    assert apps["com.android.settings"].label == "Settings"
    assert apps["com.google.android.apps.messaging"].label == "Messages"
    assert apps["com.android.settings"].state["wifi"] is False
    assert len(apps["com.android.contacts"].state["contacts"]) >= 15


def test_every_shipped_screen_lays_out_inside_the_screen(phone: SimPhone) -> None:
    for app in builtin_apps():
        for screen in app.screens:
            phone.start_app(app.package, screen)
            snap = phone.snapshot()
            for view in snap.root.walk():
                for child in view.children:
                    inside = child.bounds.intersect(view.bounds)
                    assert inside == child.bounds, f"{app.package}/{screen}: {child.key} leaks out"


def test_unknown_key_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(MINIMAL.replace("on_tap:", "on_tapp:"), encoding="utf-8")
    with pytest.raises(SimulatorError) as info:
        load_app_file(path)
    message = str(info.value)
    assert str(path) in message
    assert "screens.main.body[0].on_tapp" in message


def test_goto_to_a_missing_screen_is_named(tmp_path: Path) -> None:
    path = tmp_path / "goto.yaml"
    path.write_text(MINIMAL.replace("{toggle: lit}", "{goto: nowhere}"), encoding="utf-8")
    with pytest.raises(SimulatorError, match=r"goto\.yaml: screens\.main\.body\[0\]\.on_tap\[0\]: goto"):
        load_app_file(path)


def test_undeclared_template_variable_is_rejected() -> None:
    with pytest.raises(SimulatorError, match=r"unknown variable \{cuont\}"):
        load_app_text(MINIMAL.replace("text: Toggle", "text: 'Count {cuont}'"), "mini.yaml")


def test_effect_with_two_actions_is_rejected() -> None:
    with pytest.raises(SimulatorError, match="exactly one"):
        load_app_text(MINIMAL.replace("{toggle: lit}", "{toggle: lit, back: true}"), "mini.yaml")


def test_invalid_yaml_reports_the_line() -> None:
    with pytest.raises(SimulatorError, match=r"^bad\.yaml:\d+: invalid YAML"):
        load_app_text("package: [unclosed\nlabel: x\n", "bad.yaml")


def test_start_screen_must_exist() -> None:
    with pytest.raises(SimulatorError, match="start screen 'nope'"):
        load_app_text(MINIMAL.replace("start: main", "start: nope"), "mini.yaml")


def test_append_needs_a_list_variable() -> None:
    text = MINIMAL.replace("{toggle: lit}", "{append: {list: count, item: x}}")
    with pytest.raises(SimulatorError, match="'count' is not a list"):
        load_app_text(text, "mini.yaml")


def test_missing_file_is_a_simulator_error(tmp_path: Path) -> None:
    with pytest.raises(SimulatorError, match="cannot read app file"):
        load_app_file(tmp_path / "absent.yaml")


def test_installed_user_app_appears_on_the_launcher(tmp_path: Path, phone: SimPhone) -> None:
    path = tmp_path / "mini.yaml"
    path.write_text(MINIMAL, encoding="utf-8")
    phone.install_app(path)
    assert ("com.example.mini", "Mini") in phone.installed_apps()
    assert 'text="Mini"' in phone.dump_hierarchy()
    phone.start_app("com.example.mini")
    assert phone.current_app().package == "com.example.mini"


def test_yaml_boolean_keys_get_a_hint() -> None:
    with pytest.raises(SimulatorError, match="quote the key"):
        load_app_text(MINIMAL.replace("lit: false", "on: false"), "mini.yaml")


def test_reinstall_resets_state_and_closes_screens(tmp_path: Path, phone: SimPhone) -> None:
    path = tmp_path / "mini.yaml"
    path.write_text(MINIMAL, encoding="utf-8")
    phone.install_app(path)
    phone.start_app("com.example.mini")
    phone.set_state("com.example.mini", lit=True)
    phone.install_app(path)
    assert phone.state("com.example.mini")["lit"] is False
    assert phone.current_app().package == "com.android.launcher3"


def test_stop_app_forgets_the_back_stack(phone: SimPhone) -> None:
    phone.start_app("com.android.settings", "wifi")
    phone.stop_app("com.android.settings")
    assert phone.current_app().package == "com.android.launcher3"
    phone.start_app("com.android.settings")
    assert phone.current_screen() == "main"


def test_a_phone_needs_a_launcher() -> None:
    apps = [app for app in builtin_apps() if app.package != "com.android.launcher3"]
    with pytest.raises(SimulatorError, match="no launcher"):
        SimPhone(apps)
    with pytest.raises(SimulatorError, match="too small"):
        SimPhone(width=100, height=100)
