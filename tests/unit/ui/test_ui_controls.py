"""Which nodes become controls, their ids, kinds, labels and bounds."""

from __future__ import annotations

from collections.abc import Callable

from tests.ui_coverage import uncovered
from ufo_mobile.core.ui import (
    Bounds,
    Control,
    ControlKind,
    build_ui_state,
    extract_controls,
    infer_screen,
    is_keyboard_package,
    parse_hierarchy,
    screen_for,
)

LoadDump = Callable[[str], bytes]


def _node(cls: str, bounds: str, body: str = "", **attrs: str) -> str:
    extra = " ".join(f'{k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return (f'<node class="android.widget.{cls}" package="com.example" bounds="{bounds}" {extra}>'
            f"{body}</node>")


def _screen(*children: str) -> str:
    root = _node("FrameLayout", "[0,0][1000,2000]", "".join(children))
    return f'<hierarchy rotation="0">{root}</hierarchy>'


def _by_label(controls: list[Control]) -> dict[str, Control]:
    return {c.label: c for c in controls if c.label}


MERGE_XML = _screen(
    _node("LinearLayout", "[0,100][1000,200]",
          _node("TextView", "[20,120][300,180]", text="Wi-Fi")
          + _node("ImageView", "[900,120][980,180]"),
          clickable="true", resource_id="com.example:id/row"),
    _node("LinearLayout", "[0,200][1000,300]",
          _node("TextView", "[20,210][300,250]", text="Bluetooth")
          + _node("TextView", "[20,250][300,290]", text="Off"),
          clickable="true"),
    _node("LinearLayout", "[0,300][1000,400]",
          _node("TextView", "[20,310][300,390]", text="Airplane mode")
          + _node("Switch", "[900,310][980,390]", checkable="true", checked="true", clickable="true"),
          clickable="true"),
    _node("Button", "[0,400][200,500]", _node("TextView", "[10,410][190,490]", text="SEND"),
          clickable="true", content_desc="Send"),
)


def test_clickable_container_absorbs_its_single_text_child() -> None:
    controls = extract_controls(parse_hierarchy(MERGE_XML))
    first = controls[0]
    assert (first.index, first.label, first.kind) == (1, "Wi-Fi", ControlKind.BUTTON)
    assert first.node.resource_name == "row" and first.label_node is not None
    assert first.bounds == Bounds(0, 100, 1000, 200)  # the container is the tap target
    assert "Wi-Fi" not in [c.label for c in controls[1:]]


def test_containers_with_several_texts_or_controls_are_not_merged() -> None:
    controls = extract_controls(parse_hierarchy(MERGE_XML))
    labels = [(c.index, c.label, c.parent, c.level) for c in controls]
    assert labels == [
        (1, "Wi-Fi", 0, 0),
        (2, "", 0, 0), (3, "Bluetooth", 2, 1), (4, "Off", 2, 1),
        (5, "", 0, 0), (6, "Airplane mode", 5, 1), (7, "", 5, 1),
        (8, "Send", 0, 0),  # the "SEND" child only repeated the button's description
    ]
    assert controls[6].kind is ControlKind.TOGGLE and controls[6].node.checked


FILTER_XML = (
    '<hierarchy rotation="0">'
    + _node("FrameLayout", "[0,0][1000,2000]",
            _node("TextView", "[0,2100][100,2200]", text="Below the screen")
            + _node("TextView", "[10,10][10,50]", text="Zero width")
            + _node("TextView", "[10,60][200,90]", text="Hidden", visible_to_user="false")
            + _node("Button", "[900,500][1200,600]", text="Half out", clickable="true")
            + _node("LinearLayout", "[0,700][1000,800]",
                    _node("TextView", "[20,710][400,790]", text="Greyed", enabled="false"),
                    clickable="true", enabled="false")
            + _node("Button", "[0,800][200,900]", clickable="true", enabled="false",
                    resource_id="com.example:id/ok")
            + _node("FrameLayout", "[0,900][1000,1000]")
            + _node("EditText", "[0,1000][1000,1100]", text="Search", hint="Search", clickable="true",
                    focusable="true", focused="true")
            + _node("ListView", "[0,1100][1000,1500]", scrollable="true")
            + _node("ImageView", "[0,1500][100,1600]", content_desc="Logo"),
            )
    + "</hierarchy>"
)


def test_filter_rules() -> None:
    controls = extract_controls(parse_hierarchy(FILTER_XML))
    found = _by_label(controls)
    assert not {"Below the screen", "Zero width", "Hidden"} & set(found)
    assert found["Half out"].bounds == Bounds(900, 500, 1000, 600)  # clipped to the screen
    # the disabled row without text is gone, its text stays (and says it is disabled)
    assert found["Greyed"].level == 0 and not found["Greyed"].node.enabled
    disabled_button = [c for c in controls if c.node.resource_name == "ok"]
    assert len(disabled_button) == 1 and not disabled_button[0].node.enabled
    assert not [c for c in controls if c.node.class_name.endswith("FrameLayout")]
    edit = [c for c in controls if c.kind is ControlKind.EDIT][0]
    assert (edit.label, edit.hint, edit.focused) == ("", "Search", True)  # text equal to hint = empty
    assert [c.kind for c in controls if c.node.scrollable] == [ControlKind.SCROLL]
    assert found["Logo"].kind is ControlKind.IMAGE


OVERLAY_XML = _screen(
    _node("LinearLayout", "[0,0][1000,2000]",
          _node("Button", "[0,100][1000,200]", text="Behind", clickable="true"), drawing_order="1"),
    _node("View", "[0,0][1000,2000]", clickable="true", resource_id="com.example:id/scrim",
          drawing_order="2"),
    _node("LinearLayout", "[100,800][900,1200]",
          _node("Button", "[200,1000][800,1100]", text="OK", clickable="true"), drawing_order="3"),
)


def test_nodes_under_a_later_drawn_overlay_are_dropped() -> None:
    found = _by_label(extract_controls(parse_hierarchy(OVERLAY_XML)))
    assert "OK" in found and "Behind" not in found
    # document order alone (no drawing-order) is not trusted to mean "on top"
    unordered = OVERLAY_XML.replace('drawing-order="', 'x-order="')
    assert "Behind" in _by_label(extract_controls(parse_hierarchy(unordered)))


KEYBOARD = Bounds(0, 1100, 1080, 1794)


def _with_keyboard(raw: bytes) -> str:
    """The dump with a keyboard window on top (windows are listed top-most first)."""
    keys = "".join(
        _node("Button", f"[{i * 100},1200][{i * 100 + 100},1350]", text=ch, clickable="true")
        .replace("com.example", "com.google.android.inputmethod.latin")
        for i, ch in enumerate("qwertyuiop")
    )
    keyboard = (f'<node class="android.widget.FrameLayout" package="com.google.android.inputmethod.latin" '
                f'bounds="[0,1100][1080,1794]">{keys}</node>')
    text = raw.decode("utf-8")
    start = text.index("<node")
    return text[:start] + keyboard + text[start:]


def test_keyboard_keys_are_not_controls(load_dump: LoadDump) -> None:
    raw = load_dump("js-adb__046ee58_window_dump.xml")  # YouTube, 1080x1794
    plain = build_ui_state(raw, observation_id="a")
    state = build_ui_state(_with_keyboard(raw), observation_id="b")
    assert state.phone_state["keyboard_shown"] and not plain.phone_state["keyboard_shown"]
    assert state.phone_state["current_app"] == "com.google.android.youtube"
    assert not [c for c in state.elements if "inputmethod" in c.node.package]
    assert '"q"' not in state.formatted_text and "keyboard shown" in state.formatted_text
    # app controls under the keyboard are gone; those above it keep their ids' labels
    assert len([c for c in plain.elements if KEYBOARD.contains(c.bounds)]) >= 3
    assert not any(KEYBOARD.contains(c.bounds) for c in state.elements)
    above = [c.label for c in plain.elements if c.bounds.bottom <= KEYBOARD.top]
    shown = [c.label for c in state.elements if c.bounds.bottom <= KEYBOARD.top]
    assert above and [label for label in shown if label in above] == above
    # a control the keyboard covers in part is offered by the part above it (windows.keyboard_band)
    assert all(c.bounds.bottom <= KEYBOARD.top for c in state.elements if c.label not in above)


def test_keyboard_package_detection() -> None:
    assert is_keyboard_package("com.google.android.inputmethod.latin")
    assert is_keyboard_package("com.baidu.input_huawei")
    assert is_keyboard_package("com.baidu.input")
    assert is_keyboard_package("com.sohu.inputmethod.sogou")
    assert is_keyboard_package("com.touchtype.swiftkey")
    assert is_keyboard_package("com.vivo.ai.ime")
    assert not is_keyboard_package("com.whatsapp")
    assert not is_keyboard_package("com.example.imessage")
    assert not is_keyboard_package("com.example.keyboardtrainer", app_package="com.example.keyboardtrainer")


def test_permission_dialog_root_not_at_origin(load_dump: LoadDump) -> None:
    state = build_ui_state(load_dump("hksmartcompanion__home_current.xml"), observation_id="o")
    assert (state.screen_width, state.screen_height) == (1080, 2400)  # dialog margins mirrored
    deny = state.get_control(7)
    assert (deny.label, deny.node.class_name) == ("Don’t allow", "android.widget.Button")
    assert state.get_element_coords(7) == (540, 1804)
    precise = [c for c in state.elements if c.label == "Precise"][0]
    assert precise.kind is ControlKind.TOGGLE and precise.node.checked


def test_checked_switch_is_on(load_dump: LoadDump) -> None:
    state = build_ui_state(load_dump("senior-shield__window_dump.xml"), observation_id="o")
    bluetooth = [c for c in state.elements if c.label == "Bluetooth, On"][0]
    flashlight = [c for c in state.elements if c.label == "Flashlight, Off"][0]
    assert bluetooth.node.checked and not flashlight.node.checked
    lines = state.formatted_text.splitlines()
    assert [ln for ln in lines if '"Bluetooth, On"' in ln][0].strip().startswith(f"{bluetooth.index} Switch")
    assert "check=on" in [ln for ln in lines if '"Bluetooth, On"' in ln][0]
    assert "check=off" in [ln for ln in lines if '"Flashlight, Off"' in ln][0]


def test_tablet_dump_bounds(load_dump: LoadDump) -> None:
    state = build_ui_state(load_dump("webkiosk__settings_ui.xml"), observation_id="o")
    assert (state.screen_width, state.screen_height) == (1920, 1200)
    screen = Bounds(0, 0, 1920, 1200)
    assert all(screen.contains(c.bounds) for c in state.elements)
    installer = [c for c in state.elements if c.label == "Force old installer"][0]
    switch = [c for c in state.elements if c.parent == installer.parent and c.kind is ControlKind.TOGGLE]
    assert [c.node.checked for c in switch] == [True]
    assert switch[0].bounds == Bounds(1768, 718, 1872, 814)


def test_rotated_dump_keeps_the_dump_orientation(load_dump: LoadDump) -> None:
    raw = load_dump("telegram-session-automation__cc26d9a_ui.xml")
    tree = parse_hierarchy(raw)
    assert tree.rotation == 1
    assert screen_for(tree, None) == Bounds(0, 0, 900, 1600)
    assert screen_for(tree, (1600, 900)) == Bounds(0, 0, 900, 1600)  # caller's size turned to match
    state = build_ui_state(raw, observation_id="o", screen_size=(1600, 900))
    assert state.phone_state["rotation"] == 1 and state.screen_width == 900
    assert [c.label for c in state.elements][:3] == ["Navigate up", "Search Google Play", "More Options"]


def test_russian_and_chinese_text_intact(load_dump: LoadDump) -> None:
    avito = build_ui_state(load_dump("avito__first_screen.xml"), observation_id="o")
    assert '\n29 TextView "Все регионы, радиус"\n' in avito.formatted_text
    assert "Уведомлять о новых" in {c.label for c in avito.elements}
    futu = build_ui_state(load_dump("futu-graber__87112bc_window_dump.xml"), observation_id="o")
    assert '"参考成交价 200.040"' in futu.formatted_text
    assert "调仓历史" in {c.label for c in futu.elements}


def test_dump_gives_controls_with_stable_ids(dump_name: str, load_dump: LoadDump) -> None:
    raw = load_dump(dump_name)
    first = extract_controls(parse_hierarchy(raw))
    second = extract_controls(parse_hierarchy(raw))
    assert first, "every real screen has something to show"
    assert [c.index for c in first] == list(range(1, len(first) + 1))
    def key(c: Control) -> tuple[int, int, str]:
        return c.index, c.node.order, c.label

    assert [key(c) for c in first] == [key(c) for c in second]
    assert [c.node.order for c in first] == sorted(c.node.order for c in first)  # document order
    assert any(c.label for c in first)


def test_every_reachable_actionable_node_is_a_control(dump_name: str, load_dump: LoadDump) -> None:
    tree = parse_hierarchy(load_dump(dump_name))
    screen = infer_screen(tree)
    missing = uncovered(tree, screen, extract_controls(tree, screen))
    assert not missing, [(n.class_name, n.resource_id, n.bounds) for n in missing]
