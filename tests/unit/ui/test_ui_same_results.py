"""Every real dump parses and filters to exactly what it did before the parser was made faster.

The digests below were recorded from the code before the change (ElementTree parse, one ``UINode``
per ``<node>``): per dump, a sha256 over every node's fields and one over every control's fields
(index, kind, class, label, description, hint, bounds, flags, level, parent, and which nodes it
stands for) with the screen's app and keyboard.

``RECORDED_TEXT`` holds a third digest per dump, recorded before the XML -> text path was made
faster (issue 25): the screen text the model reads (with its legend and without, as the agent sends
it) and every control as a step's ``controls.json`` holds it (``control_info``). A change of speed
must leave it as it is, byte for byte.

When a change of the filter or of the screen text's layout is meant to change these, record the
digests again with ``PYTHONPATH=. python tests/unit/ui/test_ui_same_results.py`` and say why in the
commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from typing import Any

import pytest

from ufo_mobile.core.ui import UIState, build_ui_state
from ufo_mobile.core.ui.format import FormatOptions
from ufo_mobile.core.ui.hierarchy import UINode
from ufo_mobile.core.ui.state import control_info

LoadDump = Callable[[str], bytes]

#: dump name -> (nodes digest, controls digest), the first 16 hex digits of each sha256
RECORDED: dict[str, tuple[str, str]] = {
    'adb-appium-qt-tooling__ui.xml': ('0a76b08645b25303', 'bbe312d4a5df098c'),
    'adb-appium-qt-tooling__ui_dump.xml': ('0c739ec5d4ffe6d3', '1d407619c6edffc0'),
    'adb-test__a1c22ea_uidump.xml': ('864a54598e978a43', 'fefab1a8f35f3f6d'),
    'android-app-automated-test__hierarchy.xml': ('31beb491ec427e53', 'd0adbd62f2e860bf'),
    'android-testing__ui_dump.xml': ('e82f44c82cb0cbc9', 'f2ad73687df25998'),
    'ask-amo__askamo-after-clear.xml': ('99a13f69feb64daa', '08c3972679215230'),
    'ask-amo__models_ui-dump.xml': ('020885898c267755', '48a63090cad8fcff'),
    'ask-amo__window_dump.xml': ('3b97dadfd548b8a9', '7306cdb301365ced'),
    'auto-zap__01f3f03_window_dump.xml': ('2b289bc9d2eda8d1', '1e8596d1076d72e5'),
    'auto-zap__20ccae0_window_dump.xml': ('65ef7c17f00f2d8f', '2d6153e1b8d02d05'),
    'auto-zap__5abada9_window_dump.xml': ('9e1a222f8227194a', '4650dfeeb902bd82'),
    'auto-zap__8b47f11_window_dump.xml': ('25153882d52b79bf', '59d975bb45cfc10b'),
    'avito__2ed5efe_hierarchy.xml': ('b7b931cb9cc69fd9', '9eabf6d5e945a8c5'),
    'avito__filter_hierarchy.xml': ('969a40fdf2fc1fce', '8255a60cb34a59a9'),
    'avito__first_screen.xml': ('887aa19c86774957', '84df5dcc8da1ae32'),
    'chaos-monkey-ai__c0e20ab_window_dump.xml': ('abe282ed574969c4', '91407d79a330956e'),
    'douyin-helper__c724602_uidump.xml': ('fe607145fffad447', '35c106c97adcddea'),
    'fit-novs__browser_dump.xml': ('f1f9b98131f94d7c', 'd851a8f6959e1058'),
    'futu-graber__87112bc_window_dump.xml': ('e4f7437c172d0cdc', '464b91ccda0ecc19'),
    'futu-graber__fa5f2dd_window_dump.xml': ('aa4c57c3c77331aa', '80a6ddc914f29d75'),
    'hksmartcompanion__call_place_verify.xml': ('20b8a436d356fe99', '0f2a650e90ad4b73'),
    'hksmartcompanion__home_current.xml': ('fab16379e36969e0', '44622042326fa5d1'),
    'hksmartcompanion__live_drive_test.xml': ('acbf80ea7d215f8a', '50e018dc526b2ced'),
    'hksmartcompanion__nav_transit.xml': ('008be642c63de596', 'f749ea5b372cd5e8'),
    'intelligent-search__settings_google.xml': ('807013eaedcb2cf0', 'f5212cb2015b0cd4'),
    'intelligent-search__window_dump.xml': ('db1de6d00eceedf0', '86283d4bfc760965'),
    'jarvis-mobile-ai__window_dump.xml': ('345eca2a59dc9726', '7a5a16def7ec097e'),
    'jeromwork-launcher__tg-current.xml': ('a42b881b7883b099', 'ce5bd7c88fc124ce'),
    'js-adb__046ee58_window_dump.xml': ('38e5d5cb85e871cd', '9d349fe390ad7157'),
    'mobileagentv2-promax__ui_dump.xml': ('8f12d8714beb7242', 'ea92a1c4c03c69af'),
    'phoneagent__wd.xml': ('e604285f041e0b8f', 'e182a6d98105ea16'),
    'phoneagent__wd2.xml': ('6f95b6fc846583b3', 'bd89099eff8a5439'),
    'phoneagent__window_dump.xml': ('5b324c7f82a6d1a1', 'aacb8b77ecb85bee'),
    'schockboard__settings_dump.xml': ('efbfc5e4fdee0f19', '09ba0033c7032066'),
    'senior-shield__window_dump.xml': ('9a3cee88c718826d', 'a274708e31ff0b05'),
    'telegram-session-automation__cc26d9a_ui.xml': ('b5d1af7fc581f961', 'dc48776c19a40b5a'),
    'telegram-session-automation__ffc83dc_ui.xml': ('b05b63355d6741d6', '3d8e967bb13f6bf7'),
    'webkiosk__settings_ui.xml': ('849d931153576048', 'e2087d0a8fd215ff'),
    'webkiosk__window_dump2.xml': ('02b1368230d248b8', 'fe625ad12d4ec674'),
    'wechat-rpa-demo__appui.xml': ('1466ccb5ed4baa5b', 'a7b0a04a7ce46a65'),
    'wechat-rpa-demo__tmp-ui.xml': ('56289ceb899517c6', 'f122f41abee0bb97'),
    'wework-auto-reply__ui_step1_message.xml': ('2e2cb0877574f87b', 'bc7273808079efda'),
    'whatsapp-automation__window_dump.xml': ('239d04322c43c333', '33e07fbbeb70f4cb'),
}

#: dump name -> the first 16 hex digits of the sha256 of its screen text and controls.json (``text_digest``)
RECORDED_TEXT: dict[str, str] = {
    'adb-appium-qt-tooling__ui.xml': 'e099424eb39b8dae',
    'adb-appium-qt-tooling__ui_dump.xml': '6bb06e0927a4238e',
    'adb-test__a1c22ea_uidump.xml': 'f199b7e4cf841bfd',
    'android-app-automated-test__hierarchy.xml': 'c358094faab01fef',
    'android-testing__ui_dump.xml': '20c3676d7bb29e17',
    'ask-amo__askamo-after-clear.xml': '4adddaa7a3b773c5',
    'ask-amo__models_ui-dump.xml': 'b3699e2b7d5147b2',
    'ask-amo__window_dump.xml': '271af4117dd3103d',
    'auto-zap__01f3f03_window_dump.xml': '39e875a568b593b0',
    'auto-zap__20ccae0_window_dump.xml': 'a2411de6e569e735',
    'auto-zap__5abada9_window_dump.xml': '620f1a82927e7f8e',
    'auto-zap__8b47f11_window_dump.xml': 'b718869852f4a426',
    'avito__2ed5efe_hierarchy.xml': '451d688ae891c2ac',
    'avito__filter_hierarchy.xml': '21eebdc427d64d37',
    'avito__first_screen.xml': '5a72fdc9f42e0fdb',
    'chaos-monkey-ai__c0e20ab_window_dump.xml': '1ea53c4c4eaed78c',
    'douyin-helper__c724602_uidump.xml': 'dee340ae33899ca6',
    'fit-novs__browser_dump.xml': '46c3f97cc2076fea',
    'futu-graber__87112bc_window_dump.xml': 'b46a803734bb7754',
    'futu-graber__fa5f2dd_window_dump.xml': '3e4afe2612755f86',
    'hksmartcompanion__call_place_verify.xml': 'e3e6fc0009cc601a',
    'hksmartcompanion__home_current.xml': '6ed7c4cad2eb172e',
    'hksmartcompanion__live_drive_test.xml': '6a2606e66c0a3222',
    'hksmartcompanion__nav_transit.xml': 'c72c6ab3cc668aa6',
    'intelligent-search__settings_google.xml': '10297f6ae56f6a2c',
    'intelligent-search__window_dump.xml': 'ed51977ecf13e28b',
    'jarvis-mobile-ai__window_dump.xml': 'de095fb200b3e907',
    'jeromwork-launcher__tg-current.xml': 'b3677a73d853aca9',
    'js-adb__046ee58_window_dump.xml': 'bb3e6d26b7c3184a',
    'mobileagentv2-promax__ui_dump.xml': 'cf792faaec83c432',
    'phoneagent__wd.xml': '48f14b9142708aa1',
    'phoneagent__wd2.xml': 'e3b8ef7b33d6fb25',
    'phoneagent__window_dump.xml': '0465b225cafde2f6',
    'schockboard__settings_dump.xml': 'f4cec8b243c872d0',
    'senior-shield__window_dump.xml': '0a8c92c00f40fced',
    'telegram-session-automation__cc26d9a_ui.xml': '8078572c4147eb64',
    'telegram-session-automation__ffc83dc_ui.xml': 'f378e22d777ef301',
    'webkiosk__settings_ui.xml': '13ab17747d245868',
    'webkiosk__window_dump2.xml': '67bd851eebc03dd4',
    'wechat-rpa-demo__appui.xml': '1516a9362c47c643',
    'wechat-rpa-demo__tmp-ui.xml': 'e7c8ed4b156d419f',
    'wework-auto-reply__ui_step1_message.xml': '7c5e7874eed06812',
    'whatsapp-automation__window_dump.xml': '6c6f9dcbcb6f92f4',
}


def _node_fields(node: UINode) -> list[Any]:
    return [node.class_name, node.text, node.resource_id, node.package, node.content_desc, node.hint,
            node.bounds.as_list(), node.checkable, node.checked, node.clickable, node.long_clickable, node.enabled,
            node.focusable, node.focused, node.scrollable, node.password, node.selected, node.visible_to_user,
            node.naf, node.index, node.depth, node.drawing_order, node.window, node.display_id, node.order,
            node.end, node.parent, node.z, [child.order for child in node.children]]


def _digest(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def digests(state: UIState) -> tuple[str, str]:
    """The (nodes, controls) digests of one built screen."""
    tree = state.tree
    assert tree is not None
    nodes = [tree.rotation, [root.order for root in tree.roots], [_node_fields(node) for node in tree.nodes]]
    controls = [[c.index, c.kind.value, c.node.class_name, c.label, c.description, c.hint, c.bounds.as_list(),
                 c.node.order, c.label_node.order if c.label_node is not None else -1, c.level, c.parent,
                 c.actionable, c.editable, c.selected, c.focused, c.short_class] for c in state.elements]
    screen = [state.phone_state["current_app"], state.phone_state["keyboard_shown"], state.screen_width,
              state.screen_height, state.phone_state["focused_element"]]
    return _digest(nodes), _digest([screen, controls])


def text_digest(raw: bytes | str) -> str:
    """The digest of what the model and the step's files get from one dump: the screen text with its
    legend, the screen text as the agent sends it (no legend), and ``control_info`` of every control."""
    state = build_ui_state(raw, observation_id="o")
    sent = build_ui_state(raw, observation_id="o", format_options=FormatOptions(legend=False))
    return _digest([state.formatted_text, sent.formatted_text, [control_info(c) for c in state.elements]])


def test_every_dump_gives_the_recorded_nodes_and_controls(dump_name: str, load_dump: LoadDump) -> None:
    raw = load_dump(dump_name)
    if dump_name not in RECORDED:
        pytest.skip(f"{dump_name} has no recorded digest (a dump added to the corpus after they were recorded)")
    assert digests(build_ui_state(raw, observation_id="o")) == RECORDED[dump_name]
    # text given as str goes the same way
    assert digests(build_ui_state(raw.decode("utf-8", "replace"), observation_id="o")) == RECORDED[dump_name]


def test_every_dump_gives_the_recorded_screen_text(dump_name: str, load_dump: LoadDump) -> None:
    raw = load_dump(dump_name)
    if dump_name not in RECORDED_TEXT:
        pytest.skip(f"{dump_name} has no recorded digest (a dump added to the corpus after they were recorded)")
    assert text_digest(raw) == RECORDED_TEXT[dump_name]
    assert text_digest(raw.decode("utf-8", "replace")) == RECORDED_TEXT[dump_name]


def _record() -> None:
    from tests.unit.ui.conftest import CORPUS, corpus_names

    for name in corpus_names():
        state = build_ui_state((CORPUS / name).read_bytes(), observation_id="o")
        print(f"    {name!r}: {digests(state)!r},")
    print("RECORDED_TEXT:")
    for name in corpus_names():
        print(f"    {name!r}: {text_digest((CORPUS / name).read_bytes())!r},")


if __name__ == "__main__":
    _record()
    sys.exit(0)
