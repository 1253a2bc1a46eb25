"""Model-written code in namespaces (``sandbox/isolation.py``): it sees no process, file, socket or
secret of the runtime's, cannot signal it, and leaves nothing behind. Skipped, with the reason, where
this machine cannot make namespaces (bubblewrap missing, or user namespaces off)."""

from __future__ import annotations

import ast
import os
import socket
from pathlib import Path

import pytest

from ufo_mobile.core.sandbox import SandboxError, SandboxLimits, run_script
from ufo_mobile.core.sandbox import isolation as isolation_module
from ufo_mobile.core.sandbox.cgroup import TreeGroup
from ufo_mobile.core.sandbox.isolation import Confinement, namespace_problem
from ufo_mobile.errors import UfoMobileError

LIMITS = SandboxLimits(wall_seconds=60)
ISOLATED = Confinement("namespaces")

needs_namespaces = pytest.mark.skipif(namespace_problem() is not None,
                                      reason=f"no namespaces on this machine: {namespace_problem()}")


@needs_namespaces
async def test_the_runtimes_environment_memory_and_processes_are_out_of_sight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UFO_TEST_SECRET", "s3cr3t-value-for-the-test")
    code = ("import os\nseen = []\nfor p in os.listdir('/proc'):\n    if p.isdigit():\n"
            "        for f in ('environ', 'cmdline'):\n            try:\n"
            "                seen.append(open(f'/proc/{p}/{f}', 'rb').read())\n            except OSError:\n"
            "                pass\n"
            "pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
            "(b's3cr3t-value-for-the-test' in b''.join(seen), b'pytest' in b''.join(seen), pids)")
    result = await run_script(code, LIMITS, ISOLATED)
    assert result.ok, result
    assert result.value is not None and result.value.startswith("(False, False, [1, 2")


@needs_namespaces
async def test_the_runtime_cannot_be_signalled(tmp_path: Path) -> None:
    code = (f"import os, signal\ntry:\n    os.kill({os.getpid()}, signal.SIGSTOP)\n    out = 'sent'\n"
            "except ProcessLookupError:\n    out = 'no such process'\nout")
    result = await run_script(code, LIMITS, ISOLATED)
    assert result.value == "'no such process'"


@needs_namespaces
async def test_only_its_own_files_are_in_reach(tmp_path: Path) -> None:
    secret = tmp_path / "run" / "state.json"
    secret.parent.mkdir()
    secret.write_text("a secret")
    home = Path.home()
    code = (f"import os\nout = []\nfor path in ({str(secret)!r}, {str(home / '.ssh')!r}, '/etc/shadow'):\n"
            "    try:\n        out.append(sorted(os.listdir(path)) if os.path.isdir(path) else open(path).read())\n"
            "    except OSError as exc:\n        out.append(type(exc).__name__)\n"
            f"try:\n    open({str(tmp_path / 'forged.txt')!r}, 'w').write('x')\n    out.append('wrote')\n"
            "except OSError as exc:\n    out.append(type(exc).__name__)\nout")
    result = await run_script(code, LIMITS, ISOLATED)
    assert result.ok, result
    assert result.value == "['FileNotFoundError', 'FileNotFoundError', 'FileNotFoundError', 'FileNotFoundError']"
    assert not (tmp_path / "forged.txt").exists()


@needs_namespaces
async def test_the_network_is_off_unless_the_settings_allow_it() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
                "    out = 'connected'\nexcept OSError as exc:\n    out = type(exc).__name__\nout")
        closed = await run_script(code, LIMITS, ISOLATED)
        assert closed.value == "'ConnectionRefusedError'"  # a loopback of its own, where nothing listens
        server.settimeout(0)
        opened = await run_script(code, LIMITS, Confinement("namespaces", network=True))
        assert opened.value == "'connected'"


def a_group_can_be_made() -> bool:
    group = TreeGroup.make(64 * 1024 * 1024, 8)
    if group is None:
        return False
    group.remove()
    return True


GROUPS = a_group_can_be_made()
needs_a_bound_on_the_tree = pytest.mark.skipif(
    not GROUPS and (namespace_problem() is not None or os.geteuid() == 0),
    reason="no control group can be made here, and RLIMIT_NPROC does not bind root (uid 0) or needs namespaces")


@needs_a_bound_on_the_tree
@pytest.mark.parametrize("isolation", ["namespaces", "process"])
async def test_the_whole_tree_has_a_bounded_number_of_processes(isolation: str) -> None:
    if isolation == "namespaces" and namespace_problem() is not None:
        pytest.skip(f"no namespaces on this machine: {namespace_problem()}")
    if isolation == "process" and not GROUPS:
        pytest.skip("a plain process is bounded as a tree only by a control group, and none can be made here")
    code = ("import os, time\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n"
            "            time.sleep(100)\n            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nn")
    result = await run_script(code, SandboxLimits(wall_seconds=60, max_processes=8), Confinement(isolation))  # type: ignore[arg-type]
    assert result.ok and result.value is not None and int(result.value) < 8


@pytest.mark.skipif(not GROUPS, reason="a whole-tree memory bound needs a control group, and none can be made here")
async def test_the_whole_tree_shares_one_memory_bound() -> None:
    """Four children of 150 MB each under a 256 MB bound: they cannot all live (each alone would). Each
    holds its memory until the parent lets go, which it does once every child has either its memory or
    its end: no child can finish before another one allocates, however slow the machine."""
    code = ("import os, select\nready_r, ready_w = os.pipe()\ngo_r, go_w = os.pipe()\nkids = []\n"
            "for _ in range(4):\n    pid = os.fork()\n    if pid == 0:\n        os.close(go_w)\n"
            "        b = bytearray(150 * 1024 * 1024)\n        for j in range(0, len(b), 4096):\n            b[j] = 1\n"
            "        os.write(ready_w, b'1')\n        os.read(go_r, 1)\n        os._exit(0)\n    kids.append(pid)\n"
            "os.close(ready_w)\nos.close(go_r)\nheld, dead = 0, {}\n"
            "while held + len(dead) < 4:\n    if select.select([ready_r], [], [], 0.05)[0]:\n"
            "        held += len(os.read(ready_r, 4))\n    for k in kids:\n        if k not in dead:\n"
            "            done, status = os.waitpid(k, os.WNOHANG)\n            if done:\n"
            "                dead[k] = status\nos.close(go_w)\n"
            "[dead[k] if k in dead else os.waitpid(k, 0)[1] for k in kids]")
    confinement = Confinement("namespaces" if namespace_problem() is None else "process")
    result = await run_script(code, SandboxLimits(wall_seconds=60, memory_mb=256), confinement)
    assert result.ok and result.value is not None
    statuses = ast.literal_eval(result.value)
    assert len(statuses) == 4 and any(status != 0 for status in statuses)  # the kernel killed some


async def test_without_namespaces_a_script_is_refused_unless_the_weaker_mode_is_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolation_module, "namespace_problem", lambda: "bubblewrap is not installed")
    with pytest.raises(SandboxError) as info:
        await run_script("print(1)", LIMITS, ISOLATED)
    assert str(info.value).startswith("bubblewrap is not installed; model-written code runs only isolated")
    assert isinstance(info.value, UfoMobileError)
    weaker = await run_script("print(1)", LIMITS, Confinement("process"))
    assert weaker.ok and weaker.output == "1\n"


@needs_namespaces
async def test_a_script_that_stops_itself_cannot_hang_the_run() -> None:
    result = await run_script("import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)",
                              SandboxLimits(wall_seconds=1), ISOLATED)
    assert result.timed_out


@needs_namespaces
async def test_the_home_folder_holds_at_most_the_way_to_the_python_installation() -> None:
    home = Path.home()
    code = f"import os\ntry:\n    out = sorted(os.listdir({str(home)!r}))\nexcept OSError:\n    out = []\nout"
    result = await run_script(code, LIMITS, ISOLATED)
    assert result.ok and result.value is not None
    seen = ast.literal_eval(result.value)  # a list of names, printed by repr
    import sys

    on_the_way = {Path(p).relative_to(home).parts[0] for p in (sys.base_prefix, sys.prefix)
                  if Path(p).is_relative_to(home)}
    assert set(seen) <= on_the_way, seen


@needs_namespaces
def test_a_virtual_environment_under_tmp_is_in_the_scripts_file_system(tmp_path: Path) -> None:
    """CI's checkout, and so its virtual environment, lives under /tmp, which the sandbox mounts afresh:
    the installation must still be there for a script (it was hidden once)."""
    import site
    import subprocess
    import sys

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    project = Path(__file__).resolve().parents[3]
    probe = ("import asyncio\nfrom ufo_mobile.core.sandbox import run_script\n"
             "from ufo_mobile.core.sandbox.isolation import Confinement\n"
             "run = asyncio.run(run_script('import sys\\nsys.prefix', confinement=Confinement('namespaces')))\n"
             "print(run.value, run.error)")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(project), *site.getsitepackages()])},
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{str(venv)!r} None"
