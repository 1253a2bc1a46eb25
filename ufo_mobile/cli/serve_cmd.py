"""``python -m ufo_mobile serve [--host H] [--port N] [--devices SPEC] [--config TASK.yaml]``: the AIP task
service (``ufo_mobile.host.aip.service``), the device side of a UFO³ Galaxy constellation, over WebSocket.

It prints ``serving AIP tasks on ws://HOST:PORT ...`` once it listens (``--port 0``: a free port), a
line per client and task, and runs until Ctrl-C or SIGTERM: then no new tasks, the runs in flight end
FAIL "interrupted"/"terminated" (recorded, their TASK_END sent), and it exits 128+N. Authentication:
``UFO_MOBILE_SERVE_TOKEN`` set means every handshake needs the token, as ``?token=<token>`` in the URL
(UFO's way) or ``Authorization: Bearer <token>``; unset, a handshake carrying a token is refused. A client
that goes away has its tasks cancelled, as UFO's server does, unless ``--keep-runs-on-disconnect``.
Exit 2 for a usage or configuration error (one line).
"""

from __future__ import annotations

import argparse
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ufo_mobile.cli.common import EXIT_OK, FORMATS, MODES, PROVIDERS, err, model_overrides, port_number, positive
from ufo_mobile.errors import ConfigError
from ufo_mobile.safe_text import printable
from ufo_mobile.secret_env import take
from ufo_mobile.shipped import task_path

if TYPE_CHECKING:
    from ufo_mobile.settings import Settings

TOKEN_ENV = "UFO_MOBILE_SERVE_TOKEN"
DEFAULT_PORT = 5000  # UFO's own server's
DEFAULT_DEVICES = "sim:1"
PLACEHOLDER_TASK = {"text": "-"}  # each TASK brings its own


def add_serve_parser(sub: Any) -> None:
    """The ``serve`` command's arguments (``sub``: the command line's subparsers)."""
    serve = sub.add_parser(
        "serve", help="serve tasks over WebSocket in UFO's AIP message shapes (a Galaxy device server)",
        description="Accept AIP clients (a UFO3 Galaxy constellation, or any WebSocket client) on ws://HOST:PORT: "
                    "REGISTER, HEARTBEAT, DEVICE_INFO_REQUEST and TASK; each task runs on one of the phones as "
                    f"a normal run and ends in TASK_END completed or failed. With ${TOKEN_ENV} set, clients must "
                    "send the token, as ?token=<token> in the URL or 'Authorization: Bearer <token>'. Stop with "
                    "Ctrl-C or SIGTERM.")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on (default 127.0.0.1; any other prints a warning)")
    serve.add_argument("--port", type=port_number, default=DEFAULT_PORT,
                       help=f"the TCP port (default {DEFAULT_PORT}; 0 picks a free one, printed when listening)")
    serve.add_argument("--devices", metavar="SPEC",
                       help="the phones, as for batch: sim:N, SERIAL, HOST:PORT, SERIAL@HOST:PORT, @HOST:PORT or @ "
                            f"(comma-separated; default {DEFAULT_DEVICES})")
    serve.add_argument("--adb-port", type=port_number, metavar="PORT",
                       help="the local adb server's port (default $ANDROID_ADB_SERVER_PORT or 5037)")
    serve.add_argument("--driver", choices=("adb", "u2"),
                       help="for real phones: plain adb or uiautomator2 (default: the config's, else adb)")
    serve.add_argument("--config", type=Path, metavar="TASK.yaml",
                       help="the base settings of every task (model, limits, device options), loaded as run loads "
                            "a task file (with the default.yaml next to or above it); a TASK's own text and options "
                            "go over them")
    serve.add_argument("--provider", choices=PROVIDERS,
                       help="the model's kind (model.kind), as for run")
    serve.add_argument("--model", metavar="NAME", help="the model's name (model.name), as for run")
    serve.add_argument("--base-url", metavar="URL", help="the server's API URL (model.base_url), as for run")
    serve.add_argument("--format", choices=FORMATS, help="as for run")
    serve.add_argument("--mode", choices=MODES,
                       help="how the agent works, as for run (a TASK may choose its own)")
    serve.add_argument("--max-steps", type=positive, metavar="N", help="limits.max_steps of every task (a TASK may "
                                                                       "set its own)")
    serve.add_argument("--log-dir", type=Path, default=Path("logs"), metavar="DIR",
                       help="where the run directories go (default logs/)")
    serve.add_argument("--queue", type=int, default=16, metavar="N",
                       help="how many tasks may wait for a busy phone (default 16); 0 refuses a task when no phone "
                            "for it is free")
    serve.add_argument("--keep-runs-on-disconnect", action="store_true",
                       help="let a client's tasks go on when it disconnects (its TASK_ENDs wait for it to register "
                            "again); default: they are cancelled, as UFO's server cancels them")
    serve.add_argument("--device-id", default="ufo_mobile", metavar="ID",
                       help="this device server's id, as a constellation names it in target_id (default ufo_mobile)")


def base_settings(args: argparse.Namespace) -> Settings:
    """The settings every TASK starts from.

    Raises:
        ConfigError: the file, or no model to run tasks with.
    """
    from ufo_mobile.settings import load_settings, load_user_settings

    overrides: dict[str, Any] = {"task": PLACEHOLDER_TASK}
    model = model_overrides(args)
    if model:
        overrides["model"] = model
    if args.mode is not None:
        overrides["mode"] = args.mode
    if args.max_steps is not None:
        overrides["limits"] = {"max_steps": args.max_steps}
    try:
        if args.config is not None:
            config = task_path(args.config, "--config")
            if not config.is_file():
                raise ConfigError("no such file", path=str(config))
            return load_settings(config, overrides=overrides)
        return load_user_settings(overrides=overrides).settings  # the user config and UFO_MOBILE_* variables
    except ConfigError as exc:
        if exc.message.startswith("the scripted model needs"):
            raise ConfigError("serve needs a model: --config TASK.yaml naming one, --provider, --model and "
                              "--base-url, or your user config (config --init)", key="--config") from None
        raise


def token_from_env(name: str = TOKEN_ENV) -> str | None:
    """The bearer token (``$UFO_MOBILE_SERVE_TOKEN``, or the variable ``name``), None when unset; set but
    empty is an error. It is taken out of the environment (``secret_env.take``: no process the service
    starts inherits it, and /proc/<pid>/environ no longer shows it)."""
    token = take(name)
    if token is None:
        return None
    if not token.strip():
        raise ConfigError("is set but empty: set a token, or unset it to serve without authentication",
                          key=name)
    return token.strip()


def run_serve(args: argparse.Namespace, out: TextIO) -> int:
    import asyncio

    from ufo_mobile.fleet.devices import parse_devices, resolve

    try:
        from ufo_mobile.host.aip.peers import is_loopback
        from ufo_mobile.host.aip.service import ServeOptions, TaskService
    except ImportError as exc:
        raise ConfigError(f"needs the websockets package ({exc.name}): pip install 'ufo-mobile[host]'",
                          key="serve") from None

    if args.queue < 0:
        raise ConfigError("must be 0 or more", key="--queue")
    token = token_from_env()
    base = base_settings(args)
    phones = asyncio.run(resolve(parse_devices(args.devices or DEFAULT_DEVICES), adb_port=args.adb_port))
    options = ServeOptions(host=args.host, port=args.port, token=token, device_id=args.device_id,
                           queue_limit=args.queue, log_dir=args.log_dir.absolute(), driver=args.driver,
                           keep_runs_on_disconnect=args.keep_runs_on_disconnect)
    if not is_loopback(args.host):
        more = "" if token else f", and {TOKEN_ENV} is not set: anyone who can reach it can run tasks on your phones"
        err(f"warning: --host {printable(args.host, 80)} is not a loopback address: the task service is reachable "
             f"from other machines{more}")

    def log(line: str) -> None:
        print(line, file=out, flush=True)

    def ready(host: str, port: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        log(f"serving AIP tasks on ws://{shown}:{port} (device_id {printable(args.device_id, 80)}; phones: "
            f"{', '.join(p.name for p in phones)}; queue {args.queue}; auth: "
            f"{'token from ' + TOKEN_ENV if token else 'off'}; on disconnect: "
            f"{'runs go on' if args.keep_runs_on_disconnect else 'runs cancelled'}; "
            f"runs in {printable(str(options.log_dir))})")

    service = TaskService(base, phones, options, log=log)
    try:
        signum = asyncio.run(service.serve(ready))
    except OSError as exc:  # the port is taken, or the host is not an address of this machine
        raise ConfigError(f"cannot listen on {printable(args.host, 80)}:{args.port}: {exc.strerror or exc}",
                          key="--host" if isinstance(exc, socket.gaierror) else "--port") from exc
    log("stopped")
    return EXIT_OK if signum is None else 128 + signum
