"""The effects that change numbers and list items (``increment``, ``remove``, ``toggle: item.x``),
and the shipped apps that are installed on request: Shop, Clock, Calendar, Browser."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.sim.conftest import Screen
from ufo_mobile.errors import SimulatorError
from ufo_mobile.sim.phone.loader import load_app_text, packaged_app
from ufo_mobile.sim.phone.simphone import SimPhone

COUNTER = """
package: com.example.counter
label: Counter
start: main
state: {n: 1, rows: [{name: a, n: 5, lit: false}, {name: b, n: 0, lit: true}]}
screens:
  main:
    title: Counter
    body:
      - {class: android.widget.Button, text: Minus, on_tap: {increment: {var: n, by: -1, min: 0}}}
      - {class: android.widget.Button, text: Plus, on_tap: {increment: {var: n, by: 2, max: 4}}}
      - {class: android.widget.EditText, id: n_field, bind: n, hint: N}
      - for_each: rows
        class: android.widget.LinearLayout
        layout: row
        children:
          - {class: android.widget.Button, text: "More {item.name}", on_tap: {increment: item.n}}
          - {class: android.widget.Button, text: "Flip {item.name}", on_tap: {toggle: item.lit}}
          - {class: android.widget.Button, text: "Drop {item.name}", on_tap: {remove: {list: rows, key: name,
                                                                                       value: "{item.name}"}}}
          - {class: android.widget.Button, text: "Forget {item.name}", on_tap: {remove: {list: rows,
                                                                                          value: "{item}"}}}
"""
NEW_APPS = ("com.example.shop", "com.example.clock", "com.example.calendar", "com.example.browser")


@pytest.fixture
def counter(phone: SimPhone) -> Screen:
    phone.install(load_app_text(COUNTER, "counter.yaml"))
    phone.start_app("com.example.counter")
    return Screen(phone)


def state(screen: Screen, package: str = "com.example.counter") -> dict[str, Any]:
    return screen.phone.state(package)


def test_increment_adds_and_clamps(counter: Screen) -> None:
    counter.tap(text="Plus")
    assert state(counter)["n"] == 3
    counter.tap(text="Plus")
    assert state(counter)["n"] == 4  # max
    for _ in range(6):
        counter.tap(text="Minus")
    assert state(counter)["n"] == 0  # min


def test_increment_reads_typed_text_and_treats_other_text_as_zero(counter: Screen) -> None:
    counter.tap(rid="n_field")
    counter.phone.input_text("3", clear=True)
    counter.tap(text="Plus")
    assert state(counter)["n"] == 4
    counter.phone.input_text("lots", clear=True)
    counter.tap(text="Minus")
    assert state(counter)["n"] == 0


def test_item_fields_change_in_their_row(counter: Screen) -> None:
    counter.tap(text="More a")
    counter.tap(text="Flip a")
    counter.tap(text="Flip b")
    assert state(counter)["rows"] == [{"name": "a", "n": 6, "lit": True}, {"name": "b", "n": 0, "lit": False}]


def test_remove_by_key_and_by_value(counter: Screen) -> None:
    counter.tap(text="Drop a")
    assert [row["name"] for row in state(counter)["rows"]] == ["b"]
    counter.tap(text="Forget b")
    assert state(counter)["rows"] == []


@pytest.mark.parametrize(("effect", "message"), [
    ("{increment: nope}", "increment: unknown state variable 'nope'"),
    ("{increment: {var: n, step: 2}}", "increment.step: "),  # a bare "path: ": pydantic's words follow
    ("{increment: {var: n, min: 5, max: 1}}", "max must not be less than min"),
    ("{toggle: item.}", "toggle: unknown state variable 'item.'"),
    ("{remove: {list: n, value: 1}}", "remove: state variable 'n' is not a list"),
    ("{remove: {list: rows}}", "remove.value: "),
    ("{remove: {list: rows, value: \"{missing}\"}}", "unknown variable {missing}"),
])
def test_bad_effects_are_named(effect: str, message: str) -> None:
    text = COUNTER.replace("{increment: {var: n, by: -1, min: 0}}", effect)
    with pytest.raises(SimulatorError, match=message.replace("{", r"\{").replace("}", r"\}")):
        load_app_text(text, "counter.yaml")


def test_the_apps_installed_on_request_lay_out_inside_the_screen(phone: SimPhone) -> None:
    for package in NEW_APPS:
        app = packaged_app(package)
        assert not app.preinstalled
        phone.install(app)
        for screen in app.screens:
            phone.start_app(package, screen)
            snap = phone.snapshot()
            for view in snap.root.walk():
                for child in view.children:
                    assert child.bounds.intersect(view.bounds) == child.bounds, f"{package}/{screen}: {child.key}"


def test_shop_cart_steppers_and_remove(phone: SimPhone) -> None:
    phone.install(packaged_app("com.example.shop"))
    phone.set_state("com.example.shop", cart=[{"name": "Bananas", "price": "$0.69", "qty": "2"}])
    phone.start_app("com.example.shop", "cart")
    screen = Screen(phone)
    screen.tap(desc="Increase Bananas")
    assert phone.state("com.example.shop")["cart"][0]["qty"] == 3
    for _ in range(4):
        screen.tap(desc="Decrease Bananas")
    assert phone.state("com.example.shop")["cart"][0]["qty"] == 1
    screen.tap(desc="Remove Bananas")
    assert phone.state("com.example.shop")["cart"] == []
    assert screen.find(text="Checkout") is None and screen.find(text="Your cart is empty.") is not None


def test_clock_switches_show_and_change_each_alarm(phone: SimPhone) -> None:
    phone.install(packaged_app("com.example.clock"))
    phone.start_app("com.example.clock")
    screen = Screen(phone)
    assert screen.node(desc="08:00 Weekend").get("checked") == "false"
    screen.tap(desc="08:00 Weekend")
    assert screen.node(desc="08:00 Weekend").get("checked") == "true"
    assert [alarm["enabled"] for alarm in phone.state("com.example.clock")["alarms"]] == [True, True, True]
    screen.tap(desc="Delete alarm 06:30")
    assert [alarm["label"] for alarm in phone.state("com.example.clock")["alarms"]] == ["Weekend", "Medication"]


def test_calendar_day_selection_and_new_event(phone: SimPhone) -> None:
    phone.install(packaged_app("com.example.calendar"))
    phone.start_app("com.example.calendar")
    screen = Screen(phone)
    assert screen.find(text="Yoga class") is not None
    screen.tap(desc="January 17")
    assert screen.find(text="Events on January 17") is not None
    assert screen.find(text="Dentist appointment") is not None
    assert screen.node(desc="January 17").get("selected") == "true"
    screen.tap(desc="Create event")
    phone.input_text("Haircut")
    screen.tap(rid="start_hour")
    phone.input_text("9")
    screen.tap(rid="start_minute")
    phone.input_text("15")
    screen.tap(text="Save")
    assert phone.state("com.example.calendar")["events"][-1] == {"title": "Haircut", "day": 17, "hour": "9",
                                                                 "minute": "15"}


def test_browser_form_validates_then_registers(phone: SimPhone) -> None:
    phone.install(packaged_app("com.example.browser"))
    phone.start_app("com.example.browser")
    screen = Screen(phone)
    screen.tap(text="Riverside Tech Meetup - Sign up")
    screen.tap(text="Register")
    assert screen.find(text="Please enter your name.") is not None
    screen.tap(rid="name")
    phone.input_text("Ana Silva")
    screen.tap(rid="email")
    phone.input_text("ana.example.net")
    screen.tap(text="Register")
    assert screen.find(text="Please enter a valid email address.") is not None
    phone.input_text("ana@example.net", clear=True)
    screen.tap(text="Register")
    assert screen.find(text="Please agree to the code of conduct.") is not None
    assert phone.state("com.example.browser")["registrations"] == []
    screen.tap(text="I agree to the code of conduct")
    screen.tap(text="Register")
    assert screen.find(text="You're registered!") is not None
    assert phone.state("com.example.browser")["registrations"] == [
        {"name": "Ana Silva", "email": "ana@example.net", "newsletter": False}]


def test_browser_address_bar_goes_to_pages(phone: SimPhone) -> None:
    phone.install(packaged_app("com.example.browser"))
    phone.start_app("com.example.browser")
    phone.input_text("citylibrary.org/hours")
    phone.press_key("enter")
    assert phone.current_screen() == "library"
    phone.back()
    phone.input_text("example.org", clear=True)
    phone.press_key("enter")
    assert phone.current_screen() == "not_found"
    assert Screen(phone).find(text="Check if there is a typo in example.org.") is not None
