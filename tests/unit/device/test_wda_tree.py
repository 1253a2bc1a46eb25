# ruff: noqa: E501 - the sample is WDA's source as it writes it: one element a line
"""WebDriverAgent's ``/source`` (the shape ``FBXPath`` writes: XCUIElementType elements with type, value,
name, label, enabled, visible, accessible, x, y, width, height and index, in points) read as the screen
the runtime shows a model: the same numbered controls, labels and flags as on Android, at pixels."""

from __future__ import annotations

import pytest

from ufo_mobile.core.device.wda_tree import to_uiautomator
from ufo_mobile.core.ui.state import build_ui_state
from ufo_mobile.errors import UIParseError

# Settings > Wi-Fi on an iPhone (393x852 points at 3x), as WDA writes it; the text field's value is its
# placeholder while it is empty, as iOS reports it
SOURCE = """<?xml version="1.0" encoding="UTF-8"?>
<XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Settings" label="Settings" enabled="true" visible="true" accessible="false" x="0" y="0" width="393" height="852" index="0" processId="412" bundleId="com.apple.Preferences">
  <XCUIElementTypeWindow type="XCUIElementTypeWindow" enabled="true" visible="true" accessible="false" x="0" y="0" width="393" height="852" index="0">
    <XCUIElementTypeOther type="XCUIElementTypeOther" enabled="true" visible="true" accessible="false" x="0" y="0" width="393" height="852" index="0">
      <XCUIElementTypeNavigationBar type="XCUIElementTypeNavigationBar" name="Wi-Fi" enabled="true" visible="true" accessible="false" x="0" y="59" width="393" height="44" index="0">
        <XCUIElementTypeButton type="XCUIElementTypeButton" name="Settings" label="Settings" enabled="true" visible="true" accessible="true" x="0" y="59" width="105" height="44" index="0"/>
        <XCUIElementTypeStaticText type="XCUIElementTypeStaticText" value="Wi-Fi" name="Wi-Fi" label="Wi-Fi" enabled="true" visible="true" accessible="true" x="172" y="70" width="49" height="22" index="1"/>
      </XCUIElementTypeNavigationBar>
      <XCUIElementTypeTable type="XCUIElementTypeTable" enabled="true" visible="true" accessible="false" x="0" y="103" width="393" height="749" index="1">
        <XCUIElementTypeCell type="XCUIElementTypeCell" enabled="true" visible="true" accessible="false" x="0" y="120" width="393" height="52" index="0">
          <XCUIElementTypeSwitch type="XCUIElementTypeSwitch" value="0" name="Wi-Fi" label="Wi-Fi" enabled="true" visible="true" accessible="true" x="322" y="130" width="51" height="31" index="0"/>
        </XCUIElementTypeCell>
        <XCUIElementTypeCell type="XCUIElementTypeCell" name="network_home" label="HomeNet, Secure network" enabled="true" visible="true" accessible="true" x="0" y="172" width="393" height="44" index="1"/>
        <XCUIElementTypeSlider type="XCUIElementTypeSlider" value="70%" name="Brightness" label="Brightness" enabled="true" visible="true" accessible="true" x="20" y="230" width="353" height="31" index="2"/>
        <XCUIElementTypeSearchField type="XCUIElementTypeSearchField" value="Search" name="Search" label="Search" enabled="true" visible="true" accessible="true" x="16" y="280" width="361" height="36" index="3" placeholderValue="Search"/>
        <XCUIElementTypeSecureTextField type="XCUIElementTypeSecureTextField" value="••••" name="Password" label="Password" enabled="true" visible="true" accessible="true" x="16" y="330" width="361" height="36" index="4" placeholderValue="Password"/>
        <XCUIElementTypeButton type="XCUIElementTypeButton" name="Join" label="Join" enabled="false" visible="true" accessible="true" x="16" y="380" width="361" height="44" index="5"/>
        <XCUIElementTypeButton type="XCUIElementTypeButton" name="Hidden" label="Hidden" enabled="true" visible="false" accessible="true" x="16" y="900" width="361" height="44" index="6"/>
      </XCUIElementTypeTable>
    </XCUIElementTypeOther>
  </XCUIElementTypeWindow>
  <XCUIElementTypeKeyboard type="XCUIElementTypeKeyboard" enabled="true" visible="true" accessible="false" x="0" y="560" width="393" height="292" index="1">
    <XCUIElementTypeKey type="XCUIElementTypeKey" name="q" label="q" enabled="true" visible="true" accessible="true" x="3" y="570" width="35" height="45" index="0"/>
  </XCUIElementTypeKeyboard>
</XCUIElementTypeApplication>
"""


def screen() -> str:
    return build_ui_state(to_uiautomator(SOURCE, 3), observation_id="t", screen_size=(1179, 2556)).formatted_text


def test_the_tree_reads_as_the_same_screen_list_as_android() -> None:
    text = screen()
    assert text.startswith("App com.apple.Preferences, screen 1179x2556 px")
    assert "keyboard shown" in text.split("\n", 1)[0]  # the keyboard is its own window, over the app
    assert 'Button "Settings" click @157,243' in text  # points x 3: the tap lands where the screenshot shows it
    assert 'Switch "Wi-Fi" click check=off' in text
    assert 'Cell "HomeNet, Secure network" click' in text
    assert 'resource-id="network_home"' in to_uiautomator(SOURCE, 3)  # the identifier, not the label again
    assert 'Application' not in text  # the app's name is on the first line
    assert 'Slider "Brightness" desc="70%"' in text
    assert 'SearchField hint="Search" edit' in text  # an empty field: its placeholder is the hint, not its text
    assert "SecureTextField" in text and "password" in text
    assert 'Button "Join" disabled' in text
    assert "Hidden" not in text  # WDA's visible="false" is dropped, as an invisible view is on Android
    assert '"q"' not in text  # the keyboard's keys are not the app's controls


def test_a_switch_that_is_on_is_checked_and_the_rects_scale() -> None:
    on = SOURCE.replace('value="0" name="Wi-Fi"', 'value="1" name="Wi-Fi"')
    state = build_ui_state(to_uiautomator(on, 2), observation_id="t", screen_size=(786, 1704))
    assert 'Switch "Wi-Fi" click check=on' in state.formatted_text
    join = next(c for c in state.elements if c.node.text == "Join")
    assert (join.bounds.left, join.bounds.top, join.bounds.right, join.bounds.bottom) == (32, 760, 754, 848)


@pytest.mark.parametrize("bad", ["not xml <", "<hierarchy><node/></hierarchy>"])
def test_what_is_not_a_wda_source_is_a_parse_error(bad: str) -> None:
    with pytest.raises(UIParseError):
        to_uiautomator(bad, 3)
