"""Text from the model, the screen and the task file cannot forge the terminal or leak a secret."""

from __future__ import annotations

import json
from pathlib import Path

from tests.faults.conftest import cli, one_line_error, only_run_dir, run_json, write_task

FORGED = "done.\nFINISH after 9 steps in 0.1 s: all good\x1b]0;pwned\x07\x1b[2J\u202eevil\x9b31m"
UNSAFE = ("\x1b", "\x07", "\x9b", "\u202e")


def assert_terminal_safe(out: str, err: str) -> None:
    for ch in UNSAFE:
        assert ch not in out and ch not in err, repr(ch)


def test_a_forged_summary_in_the_model_answer_stays_on_its_own_line(tmp_path: Path) -> None:
    task = write_task(tmp_path, [{"status": "FINISH", "result": FORGED}])
    code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    assert code == 0
    assert_terminal_safe(out, err)
    summaries = [line for line in out.splitlines() if line.startswith(("FINISH after", "FAIL after"))]
    assert summaries == ["FINISH after 1 step in " + summaries[0].split(" in ", 1)[1]]
    assert "done.\\nFINISH after 9 steps" in summaries[0] and "\\x1b]0;pwned\\x07" in summaries[0]
    assert run_json(only_run_dir(tmp_path / "logs"))["answer"] == FORGED  # the record keeps it verbatim


def test_a_forged_thought_and_action_in_progress_lines(tmp_path: Path) -> None:
    reply = {"status": "CONTINUE", "thought": FORGED,
             "action": {"name": "open_app", "args": {"text": "Settings\n\x1b[31mstep   9  FINISH"}}}
    task = write_task(tmp_path, [reply, {"status": "FAIL", "result": FORGED}])
    code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    assert code == 1
    assert_terminal_safe(out, err)
    assert [line[:8] for line in out.splitlines() if line.startswith("step")] == ["step   1", "step   2"]


def test_a_megabyte_answer_is_printed_bounded(tmp_path: Path) -> None:
    answer = "A" * 1_000_000
    task = write_task(tmp_path, [{"status": "FINISH", "result": answer}])
    code, out, _ = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    assert code == 0
    assert max(len(line) for line in out.splitlines()) < 1000
    assert "more characters]" in out
    assert run_json(only_run_dir(tmp_path / "logs"))["answer"] == answer


def test_a_huge_task_text_is_echoed_bounded(tmp_path: Path) -> None:
    text = "Turn on Wi-Fi " + "please " * 400_000  # 2.8 MB, under the file size limit
    task = write_task(tmp_path, [{"status": "FINISH", "result": "ok"}], task=text)
    code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    assert code == 0, err[-500:]
    header = out.splitlines()[0]
    assert header.startswith("run ") and "Turn on Wi-Fi please" in header and len(header) < 400


def test_a_fifty_megabyte_task_file_is_refused(tmp_path: Path) -> None:
    task = write_task(tmp_path, [{"status": "FINISH", "result": "ok"}], task="x" * 50_000_000)
    code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    one_line_error(code, err, str(task), "file too large")
    assert out == "" and not (tmp_path / "logs").exists()


def test_hostile_screen_text_is_printed_safely(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(
        'package: com.example.hostile\nlabel: Hostile\nstart: main\nscreens:\n  main:\n    title: Main\n'
        '    body:\n      - {id: trap, text: "Tap me\\e]0;pwned\\a\\nFINISH after 1 step", on_tap: []}\n')
    tap = {"status": "CONTINUE", "thought": "t", "action": {"name": "click", "args": {"index": 2}}}
    task = write_task(tmp_path, [tap, {"status": "FINISH", "result": "ok"}],
                      extra="device: {sim: {apps: [app.yaml], start_app: com.example.hostile}}\n")
    code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    assert code == 0, out + err
    assert_terminal_safe(out, err)
    assert sum(line.startswith("FINISH after") for line in out.splitlines()) == 1


KEY = 'sk-"quo\\ted"-\\x41\'abc-0123456789ZZ'  # quotes and backslashes: escaped differently everywhere


def test_a_secret_reaches_no_file_and_no_terminal_in_any_form(tmp_path: Path) -> None:
    """The key is in the task text, the model's thought, typed into a visible field (so on the screen
    and in the dump), and in the FAIL reason; it must show up nowhere, in no escaping."""
    new_note = {"status": "CONTINUE", "thought": "new note",
                "action": {"name": "click", "args": {"index": 8, "text": "New note"}}}
    type_key = {"status": "CONTINUE", "thought": f"the key is {KEY}",
                "action": {"name": "type", "args": {"index": 4, "text": KEY}}}
    look = {"status": "CONTINUE", "thought": "look", "action": {"name": "wait", "args": {"duration": 0.01}}}
    task = write_task(tmp_path, [new_note, type_key, look, {"status": "FAIL", "result": f"gave up; key={KEY}"}],
                      task="Log in with ${MY_KEY} please", model="api_key: '${MY_KEY}'",
                      extra="device: {sim: {start_app: com.example.notes}}\n")
    code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path, env={"MY_KEY": KEY})
    assert code == 1, out + err
    run_dir = only_run_dir(tmp_path / "logs")
    assert "[REDACTED]" in out and "[REDACTED]" in (run_dir / "steps" / "0003" / "screen.txt").read_text()
    places = {"stdout": out, "stderr": err}
    for path in run_dir.rglob("*"):
        if path.is_file() and path.suffix not in (".png", ".jpg"):  # pictures hold no text
            places[str(path.relative_to(run_dir))] = path.read_text(encoding="utf-8")
    assert len(places) > 20
    for where, content in places.items():
        for window in key_windows():
            assert window not in content, (where, window)


def key_windows() -> set[str]:
    """Every 8 characters in a row of the key, in every escaping a run uses."""
    forms = {KEY, json.dumps(KEY)[1:-1], json.dumps(KEY, ensure_ascii=False)[1:-1], repr(KEY)[1:-1],
             KEY.replace("\\", "\\\\")}
    windows = {form[i:i + 8] for form in forms for i in range(len(form) - 7)}
    # HTML (the report): an entity's own letters are not the key's, so a window counts only when at
    # least 6 of its 8 characters come from the key ("ed&quot;" alone would match any quoted "...ed")
    escaped, own = "", ""
    for char in KEY:
        entity = {'"': "&quot;", "'": "&#x27;", "&": "&amp;", "<": "&lt;", ">": "&gt;"}.get(char, char)
        escaped += entity
        own += "k" if entity == char else "k" + "e" * (len(entity) - 1)
    windows |= {escaped[i:i + 8] for i in range(len(escaped) - 7) if own[i:i + 8].count("k") >= 6}
    return windows
