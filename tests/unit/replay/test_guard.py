"""The check before a replayed step, and the recorded action adapted to the screen now."""

from __future__ import annotations

from typing import Any

from tests.unit.replay.test_similarity import SIZE, rows
from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.replay.guard import adapt, check
from ufo_mobile.replay.trajectory import TrajectoryStep

APP = "com.android.settings"
PARAMS = {"click": ["index", "text"], "type": ["text", "index", "clear"], "complete": ["success", "message"]}


def step(action: ActionCall | None, controls: list[dict[str, Any]] | None = None, *, kind: str = "action",
         reason: str = "") -> TrajectoryStep:
    return TrajectoryStep(step=2, agent="MobileAgent", kind=kind,  # type: ignore[arg-type]
                          app=APP, action=action, reason=reason, screen=SIZE,
                          controls=controls if controls is not None else rows(["Wi-Fi", "Bluetooth", "Display"]))


def tap(index: int, text: str = "Wi-Fi") -> ActionCall:
    return ActionCall(name="click", args={"index": index, "text": text})


def test_a_matching_screen_passes_with_the_action_as_recorded() -> None:
    verdict = check(step(tap(3)), APP, rows(["Wi-Fi", "Bluetooth", "Display"]), SIZE, 0.8)
    assert verdict.ok and verdict.score == 1.0 and verdict.report == []
    assert verdict.action == tap(3)


def test_the_control_index_follows_the_control_and_the_text_check_stays() -> None:
    verdict = check(step(tap(3)), APP, rows(["Bluetooth", "Display", "Wi-Fi"]), SIZE, 0.8)
    assert verdict.ok
    assert verdict.action == ActionCall(name="click", args={"index": 7, "text": "Wi-Fi"})
    assert verdict.index_map[3] == 7


def test_another_app_is_a_mismatch_with_a_report_of_one_line_per_item() -> None:
    verdict = check(step(tap(3)), "com.android.contacts", rows(["Wi-Fi", "Bluetooth", "Display"]), SIZE, 0.8)
    assert not verdict.ok and verdict.action is None
    assert verdict.problem == "another app is in front: com.android.contacts, not com.android.settings"
    assert verdict.report[0] == "step: recorded step 2 (MobileAgent): click(index=3, text='Wi-Fi')"
    assert verdict.report[1] == "app: com.android.contacts (recorded: com.android.settings)"
    assert verdict.report[2] == "score: 1.00 >= threshold 0.80"
    assert all("\n" not in line for line in verdict.report)


def test_a_screen_below_the_threshold_reports_the_score_and_the_controls_missing_and_new() -> None:
    now = rows(["Network & internet", "Connected devices", "Apps", "Notifications"], top=500)
    verdict = check(step(tap(3)), APP, now, SIZE, 0.8)
    assert not verdict.ok
    assert verdict.problem.startswith("the screen differs (score 0.")
    items = {line.split(":", 1)[0]: line for line in verdict.report}
    assert set(items) == {"step", "app", "score", "missing", "new"}
    assert items["score"].endswith("< threshold 0.80")
    assert "[4] TextView 'Wi-Fi'" in items["missing"] and "'Notifications'" in items["new"]


def test_a_similar_screen_without_the_named_control_is_a_mismatch() -> None:
    now = rows(["Network & internet", "Bluetooth", "Display", "Sound", "Storage", "Battery", "Apps"])
    recorded = rows(["Wi-Fi", "Bluetooth", "Display", "Sound", "Storage", "Battery", "Apps"])
    verdict = check(step(tap(3), recorded), APP, now, SIZE, 0.8)
    assert verdict.score >= 0.8 and not verdict.ok
    assert verdict.problem == ("the control the action names is not on this screen: [3] LinearLayout 'Wi-Fi' "
                               "(in its place: [3] LinearLayout 'Network & internet')")
    assert verdict.report[-1] == f"problem: {verdict.problem}"


def test_a_lower_threshold_accepts_more() -> None:
    now = rows(["Wi-Fi", "Network & internet", "Connected devices", "Apps"])
    assert not check(step(tap(3)), APP, now, SIZE, 0.9).ok
    assert check(step(tap(3)), APP, now, SIZE, 0.3).ok


def test_text_the_run_did_not_keep_cannot_be_typed_again() -> None:
    typed = ActionCall(name="type", args={"text": "[REDACTED]", "index": 3})
    verdict = check(step(typed), APP, rows(["Wi-Fi", "Bluetooth", "Display"]), SIZE, 0.8)
    assert not verdict.ok and "[REDACTED]" in verdict.problem


def test_a_blocked_step_is_never_replayed() -> None:
    blocked = step(None, kind="blocked", reason="a person took over the phone here (log in)")
    verdict = check(blocked, APP, rows(["Wi-Fi", "Bluetooth", "Display"]), SIZE, 0.8)
    assert not verdict.ok and verdict.problem == "a person took over the phone here (log in)"


def test_pixels_are_scaled_to_the_current_screen() -> None:
    swipe = ActionCall(name="swipe", args={"coordinate": [540, 2000], "coordinate2": [540, 400], "duration": 0.5})
    tap_at = ActionCall(name="click_at", args={"x": 100, "y": 2399})
    assert adapt(swipe, {}, (0.5, 0.5), PARAMS).args == {"coordinate": [270, 1000], "coordinate2": [270, 200],
                                                           "duration": 0.5}
    assert adapt(tap_at, {}, (0.5, 0.5), PARAMS).args == {"x": 50, "y": 1200}


def test_codeact_code_gets_its_literal_indices_rewritten() -> None:
    code = ActionCall(name="code", args={"code": 'click(index=3, text="Wi-Fi")\nclick(5, "Off")\ntype("hi", 4)'})
    adapted = adapt(code, {3: 7, 5: 9, 4: 8}, (1.0, 1.0), PARAMS)
    assert adapted.args["code"] == "click(index=7, text='Wi-Fi')\nclick(9, 'Off')\ntype('hi', 8)"
    same = adapt(code, {3: 3, 4: 4, 5: 5}, (1.0, 1.0), PARAMS)
    assert same.args["code"] == code.args["code"]  # left as written when nothing moved


def test_codeact_code_that_computes_an_index_only_runs_where_nothing_moved() -> None:
    code = ActionCall(name="code", args={"code": "for i in [3]:\n    click(index=i)"})
    assert check(step(code), APP, rows(["Wi-Fi", "Bluetooth", "Display"]), SIZE, 0.8, PARAMS).ok
    moved = check(step(code), APP, rows(["Bluetooth", "Display", "Wi-Fi"]), SIZE, 0.8, PARAMS)
    assert not moved.ok and moved.problem == "the recorded code computes a control index, and the controls moved"


def test_a_tap_by_coordinates_moves_with_the_control_it_landed_on() -> None:
    on_wifi = ActionCall(name="click_at", args={"x": 540, "y": 368})  # on the title "Wi-Fi" (36..101 of its row)
    same = check(step(on_wifi), APP, rows(["Wi-Fi", "Bluetooth", "Display"]), SIZE, 0.8)
    assert same.ok and same.action == on_wifi
    moved = check(step(on_wifi), APP, rows(["Bluetooth", "Display", "Wi-Fi"]), SIZE, 0.8)  # its row is now third
    assert moved.ok and moved.action == ActionCall(name="click_at", args={"x": 540, "y": 744})
    press = ActionCall(name="long_press_at", args={"x": 540, "y": 368})
    assert check(step(press), APP, rows(["Bluetooth", "Display", "Wi-Fi"]), SIZE, 0.8).action == \
        ActionCall(name="long_press_at", args={"x": 540, "y": 744})


def test_a_tap_by_coordinates_whose_control_is_gone_is_a_mismatch() -> None:
    on_wifi = ActionCall(name="click_at", args={"x": 540, "y": 368})
    verdict = check(step(on_wifi), APP, rows(["Bluetooth", "Display", "Sound"]), SIZE, 0.0)
    assert not verdict.ok and verdict.problem.startswith("the control the recorded tap landed on is not on this screen")
    off_controls = ActionCall(name="click_at", args={"x": 540, "y": 2380})  # no control under it: scaled only
    assert check(step(off_controls), APP, rows(["Bluetooth", "Display", "Sound"]), SIZE, 0.0).action == off_controls
