"""Secrets: where they come from, and that ``type_secret`` types them without leaving a trace."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.unit.tools.conftest import Harness
from ufo_mobile.cli import main
from ufo_mobile.core.device.recording import RecordingDriver, load_recording
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.session import Session
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.trace.writer import escaped_forms
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import CredentialSettings, LogSettings, ModelSettings, Settings, TaskSettings

ROOT = Path(__file__).resolve().parents[3]
NOTES = "com.example.notes"
SECRET = 'pw-"Qu0te"-<&>-\\x41-\'2468\''  # quotes, XML and backslashes: escaped differently everywhere


def manager(tmp_path: Path, text: str) -> CredentialManager:
    path = tmp_path / "secrets.yaml"
    path.write_text(text, encoding="utf-8")
    return CredentialManager.from_settings(CredentialSettings(file=path), env={})


def test_secrets_from_environment_variables() -> None:
    creds = CredentialManager.from_settings(CredentialSettings(env={"bank_pin": "BANK_PIN", "mail": "MAIL_PW"}),
                                            env={"BANK_PIN": "246813", "MAIL_PW": "hunter2"})
    assert creds.ids() == ["bank_pin", "mail"] and list(creds) == ["bank_pin", "mail"]
    assert creds.resolve("mail") == "hunter2" and sorted(creds.values()) == ["246813", "hunter2"]
    assert "246813" not in repr(creds) and "hunter2" not in str(creds)


def test_a_secret_too_short_to_be_kept_out_of_text_is_refused() -> None:
    """Every occurrence of a secret's text is redacted: a four-digit PIN would erase '2400' from
    'The screen is 1080 x 2400 pixels' in every prompt and log."""
    with pytest.raises(ConfigError) as info:
        CredentialManager.from_settings(CredentialSettings(env={"pin": "PIN"}), env={"PIN": "2400"})
    assert info.value.key == "credentials.env.pin"
    assert info.value.message.startswith("a secret needs at least 6 characters (4 given)")


@pytest.mark.parametrize(("env", "message"), [
    ({}, "credentials.env.bank_pin: environment variable BANK_PIN is not set"),
    ({"BANK_PIN": ""}, "credentials.env.bank_pin: environment variable BANK_PIN is not set (it is empty)"),
])
def test_a_missing_variable_is_a_config_error_naming_it(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        CredentialManager.from_settings(CredentialSettings(env={"bank_pin": "BANK_PIN"}), env=env)
    assert str(caught.value) == message


def test_secrets_from_a_file_outside_the_repository(tmp_path: Path) -> None:
    quoted = SECRET.replace("'", "''")
    creds = manager(tmp_path, f"notes_pw: '{quoted}'\nwifi: \"012345\"\n")
    assert creds.ids() == ["notes_pw", "wifi"] and creds.resolve("notes_pw") == SECRET
    assert creds.resolve("wifi") == "012345"


def test_a_file_inside_a_git_work_tree_is_refused(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "config").mkdir()
    inside = tmp_path / "repo" / "config" / "secrets.yaml"
    inside.write_text("pw: x\n")
    with pytest.raises(ConfigError) as caught:
        CredentialManager.from_settings(CredentialSettings(file=inside))
    text = str(caught.value)
    assert text == (f"credentials.file: {inside} is inside the git work tree {tmp_path / 'repo'}; "
                    "keep secrets outside every repository")
    with pytest.raises(ConfigError, match=f"inside the git work tree {ROOT}"):  # this project, too
        CredentialManager.from_settings(CredentialSettings(file=ROOT / "secrets.yaml"))


@pytest.mark.parametrize(("text", "message"), [
    ("pin: 0123\n", "the value of 'pin' must be a non-empty string (quote it)"),
    ("- a\n- b\n", "must be a mapping of secret ids to values"),
    ("'bad id': x\n", "every secret id must be a plain name"),
    (f"pw: '{SECRET}'\n", "invalid YAML (details withheld: the file holds secrets)"),
])
def test_a_bad_file_is_a_config_error_that_quotes_no_value(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        manager(tmp_path, text)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert "0123" not in str(caught.value) and "Qu0te" not in str(caught.value)


def test_an_id_in_both_the_file_and_the_environment_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("pw: y\n")
    with pytest.raises(ConfigError, match="credentials.env.pw: secret 'pw' is also defined in the credentials file"):
        CredentialManager.from_settings(CredentialSettings(file=tmp_path / "s.yaml", env={"pw": "PW"}),
                                        env={"PW": "x"})


def test_the_file_path_is_relative_to_the_task_file(tmp_path: Path) -> None:
    from ufo_mobile.settings import load_settings

    (tmp_path / "tasks").mkdir()
    task = tmp_path / "tasks" / "t.yaml"
    task.write_text("task: x\nmodel: {script: s.yaml}\ncredentials: {file: ../private/secrets.yaml}\n")
    settings = load_settings(task, env={})
    assert settings.credentials.file == tmp_path / "tasks" / ".." / "private" / "secrets.yaml"
    task.write_text("task: x\nmodel: {script: s.yaml}\ncredentials: {file: ~/.ufo/secrets.yaml}\n")
    assert load_settings(task, env={}).credentials.file == Path.home() / ".ufo" / "secrets.yaml"


async def test_type_secret_types_the_value_and_records_only_its_length(tmp_path: Path) -> None:
    sim = SimDriver()
    recorder = RecordingDriver(sim, tmp_path / "actions.jsonl")
    phone = Harness(recorder, credentials=CredentialManager({"notes_pw": SECRET}))
    sim.phone.start_app(NOTES)
    await phone.observe()
    await phone.act("click", index=phone.index("New note"))
    await phone.observe()
    title = phone.index("title_field")
    await phone.act("type", text="old", index=title)
    result = await phone.act("type_secret", secret_id="notes_pw", index=title)
    assert result.success and result.summary == f"typed the secret 'notes_pw' into [{title}] 'old' (replacing its text)"
    assert sim.phone.state(NOTES)["title"] == SECRET
    unknown = await phone.act("type_secret", secret_id="bank")
    assert (unknown.success, unknown.summary) == (False, "type_secret failed: no secret 'bank'; available secret ids: "
                                                         "notes_pw")
    typed = [a for a in load_recording(tmp_path / "actions.jsonl") if a.action == "input_text"]
    assert [(a.args["text"], a.redacted, a.text_len) for a in typed] == [("old", False, 3), (None, True, len(SECRET))]
    assert_nowhere(tmp_path, SECRET)


def assert_nowhere(folder: Path, secret: str) -> None:
    forms = {f.encode() for f in escaped_forms(secret)}
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        for form in forms:
            assert form not in data, (path, form)


REPLIES = [
    {"status": "CONTINUE", "thought": "open Notes", "action": {"name": "open_app", "args": {"text": "Notes"}}},
    {"status": "CONTINUE", "thought": "new", "action": {"name": "click", "args": {"index": 8, "text": "New note"}}},
    {"status": "CONTINUE", "thought": "title", "action": {"name": "type_secret",
                                                           "args": {"secret_id": "notes_pw", "index": 4}}},
    {"status": "CONTINUE", "thought": "save", "action": {"name": "click", "args": {"index": 3, "text": "Save"}}},
    {"status": "FINISH", "thought": "done", "result": "saved"},
]


async def test_a_run_that_types_a_secret_leaves_it_in_no_prompt_and_no_file(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTES_PW", SECRET)
    settings = Settings(task=TaskSettings(text="Save a note titled with my password"),
                        model=ModelSettings(script=Path("unused.yaml")), logs=LogSettings(dir=tmp_path),
                        credentials=CredentialSettings(env={"notes_pw": "NOTES_PW"}))
    sim, model = SimDriver(), ScriptedModel(Script(replies=REPLIES))
    result = await Session(settings, device=sim, model=model).run()
    assert (result.status, result.answer, result.steps) == ("FINISH", "saved", 5)
    assert sim.phone.state(NOTES)["notes"][-1]["title"] == SECRET
    sent = "\n".join(m.text() for call in model.calls for m in call)
    assert "[REDACTED]" in sent and not [f for f in escaped_forms(SECRET) if f in sent]
    assert "[REDACTED]" in (result.run_dir / "steps" / "0005" / "screen.txt").read_text()
    actions = [json.loads(x) for x in (result.run_dir / "actions.jsonl").read_text().splitlines()]
    assert [a["action"] for a in actions] == ["start_app", "tap", "tap", "input_text", "tap"]
    assert actions[3]["args"]["text"] is None
    assert_nowhere(tmp_path, SECRET)


def test_the_command_line_prints_no_secret_either(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NOTES_PW", SECRET)
    (tmp_path / "script.yaml").write_text(json.dumps({"replies": REPLIES}))
    task = tmp_path / "task.yaml"
    task.write_text("task: Save a note titled with my password\nmodel: {script: script.yaml}\n"
                    "credentials: {env: {notes_pw: NOTES_PW}}\n")
    out = io.StringIO()
    assert main(["run", str(task), "--log-dir", str(tmp_path / "logs")], out=out) == 0
    printed = out.getvalue() + capsys.readouterr().err
    assert "type_secret(secret_id='notes_pw', index=4)" in printed and "FINISH after 5 steps" in printed
    assert not [f for f in escaped_forms(SECRET) if f in printed]
    assert_nowhere(tmp_path / "logs", SECRET)


def test_a_missing_secret_stops_the_run_before_it_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "script.yaml").write_text("replies: [{status: FINISH, result: ok}]\n")
    task = tmp_path / "task.yaml"
    task.write_text("task: x\nmodel: {script: script.yaml}\ncredentials: {env: {pw: UFO_TEST_SURELY_UNSET}}\n")
    assert main(["run", str(task), "--log-dir", str(tmp_path / "logs")], out=io.StringIO()) == 2
    assert capsys.readouterr().err == ("error: credentials.env.pw: environment variable UFO_TEST_SURELY_UNSET "
                                       "is not set\n")
    assert not (tmp_path / "logs").exists()
