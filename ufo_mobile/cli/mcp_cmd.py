"""``python -m ufo_mobile mcp``: a drop-in for UFO's mobile MCP servers (data collection on 8020,
actions on 8021, path /mcp), or the same tools on stdio.

Exit codes: 0 when stopped (Ctrl-C, SIGTERM, or the stdio client closing its end), 2 for a bad flag,
a port that cannot be listened on or a phone that cannot be opened (one line naming the flag).
Over HTTP the sessions are bounded per client address and in all and close when idle
(``--max-sessions-per-client``, ``--max-sessions``, ``--session-idle``), and ``UFO_MOBILE_MCP_TOKEN``
set means every request needs ``Authorization: Bearer <token>``.
With ``--transport stdio`` nothing but MCP messages is written to standard output; everything
else (logs, the ready line) goes to standard error.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from ufo_mobile.cli.common import EXIT_OK, err
from ufo_mobile.errors import ConfigError, DeviceError
from ufo_mobile.safe_text import printable

if TYPE_CHECKING:
    from ufo_mobile.host.mcp.limits import SessionLimits
    from ufo_mobile.host.mcp.server import Listening
    from ufo_mobile.host.mcp.state import MobileServerState
    from ufo_mobile.settings import DeviceSettings

DEVICE_KEY = "--device"
TOKEN_ENV = "UFO_MOBILE_MCP_TOKEN"


def seconds_within(low: float, high: float, *, low_included: bool = False) -> Callable[[str], float]:
    """An argparse type: a number of seconds above ``low`` (or from it) and at most ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
        if not (low <= value if low_included else low < value) or value > high:
            bound = f"from {low:g} to" if low_included else f"more than {low:g} and at most"
            raise argparse.ArgumentTypeError(f"must be {bound} {high:g} seconds, not {value:g}")
        return value
    return parse


seconds = seconds_within(0, 3600)
idle_seconds = seconds_within(1, 86400, low_included=True)


def add_mcp_parser(sub: Any) -> None:
    """The ``mcp`` command's arguments (``sub``: the command line's subparsers)."""
    from ufo_mobile.cli.common import port_number, positive
    from ufo_mobile.host.mcp.limits import SessionLimits
    from ufo_mobile.settings import DeviceSettings

    limits = SessionLimits()

    default_timeout = DeviceSettings().command_timeout_seconds
    mcp = sub.add_parser(
        "mcp", help="serve a phone as UFO's mobile MCP servers (data 8020, actions 8021; or stdio)",
        description="Serve a phone over MCP under the tool names, arguments and results of UFO's mobile MCP "
                    "servers, so that UFO's MobileAgent (config/ufo/mcp.yaml: MobileDataCollector on 8020, "
                    "MobileActionExecutor on 8021, path /mcp) works against it unchanged. One process serves "
                    "both groups with one shared screen state. Stop it with Ctrl-C or SIGTERM.")
    mcp.add_argument("--server", choices=("data", "action", "both"), default="both",
                     help="which tools to serve: data collection, actions, or both (default)")
    mcp.add_argument("--transport", choices=("http", "stdio"), default="http",
                     help="http: streamable HTTP, each group on its own port at /mcp (default, as UFO); "
                          "stdio: the chosen tools on standard input/output")
    mcp.add_argument("--host", default="127.0.0.1",
                     help="address to listen on (http; default 127.0.0.1: this machine only; localhost: both "
                          "127.0.0.1 and ::1, as UFO's mcp.yaml names it). With "
                          f"${TOKEN_ENV} set, every request needs 'Authorization: Bearer <token>'")
    mcp.add_argument("--data-port", type=port_number, default=8020, metavar="PORT",
                     help="port of the data collection server (http; default 8020; 0 picks a free one)")
    mcp.add_argument("--action-port", type=port_number, default=8021, metavar="PORT",
                     help="port of the action server (http; default 8021; 0 picks a free one)")
    mcp.add_argument("--device", metavar="SPEC",
                     help="the phone: 'sim' (the built-in simulated phone), SERIAL or HOST:PORT on the adb server, "
                          "SERIAL@HOST:PORT on a remote adb server, or wda:URL (an iPhone's WebDriverAgent) "
                          "(default: the device your user config or $UFO_MOBILE_DEVICE names, else the only "
                          "phone on the adb server)")
    mcp.add_argument("--driver", choices=("adb", "u2"),
                     help="with a real phone: plain adb (default) or uiautomator2 (falls back to adb)")
    mcp.add_argument("--adb-port", type=port_number, metavar="PORT",
                     help="the adb server's port (default $ANDROID_ADB_SERVER_PORT or 5037)")
    mcp.add_argument("--timeout", type=seconds, default=default_timeout, metavar="SECONDS",
                     help=f"the bound on every device call (default {default_timeout:g}); a call that runs out "
                          "fails with the reason instead of hanging")
    mcp.add_argument("--max-sessions", type=positive, default=limits.total, metavar="N",
                     help=f"http: the MCP sessions open at once on each server, all clients together (default "
                          f"{limits.total})")
    mcp.add_argument("--max-sessions-per-client", type=positive, default=limits.per_client, metavar="N",
                     help=f"http: the sessions one client address may hold on each server (default "
                          f"{limits.per_client}); at the bound its least recently used idle session is closed")
    mcp.add_argument("--session-idle", type=idle_seconds, default=limits.idle_seconds, metavar="SECONDS",
                     help=f"http: a session with no request for this long is closed (default "
                          f"{limits.idle_seconds:g})")


def device_settings(args: argparse.Namespace) -> DeviceSettings:
    """The phone ``--device``, ``--driver`` and ``--adb-port`` name.

    Raises:
        ConfigError: a spec that names no single phone, or flags that contradict it.
    """
    from ufo_mobile.fleet.devices import parse_item
    from ufo_mobile.settings import DeviceSettings, user_layers

    spec: str | None = args.device
    common: dict[str, Any] = {"command_timeout_seconds": args.timeout}
    if spec is not None and spec.strip() == "sim":
        if args.driver:
            raise ConfigError("--driver is for real phones; the simulated phone needs none", key="--driver")
        return DeviceSettings(kind="sim", **common)
    common["kind"] = args.driver or "adb"
    if args.adb_port is not None:
        common["adb_port"] = args.adb_port
    if spec is None:
        named = user_layers().device()  # the phone the user config or $UFO_MOBILE_DEVICE names, if any
        if named is not None:
            return named.model_copy(update={k: v for k, v in common.items() if k != "kind" or args.driver})
        return DeviceSettings(**common)
    try:
        source = parse_item(spec.strip())
    except ConfigError as exc:
        raise ConfigError(f"{printable(spec, 80)!r} is not a phone (expected sim, SERIAL, HOST:PORT, "
                          "SERIAL@HOST:PORT or wda:URL)", key=DEVICE_KEY) from exc
    if source.kind == "wda":  # an iPhone: one driver, its WebDriverAgent
        if args.driver:
            raise ConfigError("--driver is for Android phones; an iPhone is driven through its WebDriverAgent",
                              key="--driver")
        return DeviceSettings(kind="wda", serial=source.serial, command_timeout_seconds=args.timeout)
    if source.kind in ("sim", "server"):
        raise ConfigError(f"{printable(spec, 80)!r} names several phones; one server serves one phone "
                          "(sim, SERIAL, HOST:PORT or SERIAL@HOST:PORT)", key=DEVICE_KEY)
    if source.kind == "remote":
        if args.adb_port is not None:
            raise ConfigError("give the adb server in --device SERIAL@HOST:PORT or with --adb-port, not both",
                              key="--adb-port")
        return DeviceSettings(serial=source.serial, adb_host=source.host, adb_port=source.port, **common)
    return DeviceSettings(serial=source.serial, **common)


def _groups(server: str) -> tuple[str, ...]:
    return ("data", "action") if server == "both" else (server,)


def _bind_all(args: argparse.Namespace, groups: tuple[str, ...]) -> dict[str, list[socket.socket]]:
    """The listening sockets of the HTTP servers, bound before the phone is touched (``localhost``:
    on 127.0.0.1 and ::1)."""
    from ufo_mobile.host.mcp.server import bind_host

    ports = {"data": args.data_port, "action": args.action_port}
    if len(groups) == 2 and ports["data"] == ports["action"] != 0:
        raise ConfigError(f"the data server already listens on {ports['data']}", key="--action-port")
    if not args.host.strip():
        raise ConfigError("the address is empty", key="--host")
    sockets: dict[str, list[socket.socket]] = {}
    try:
        for group in groups:
            try:
                sockets[group] = bind_host(args.host, ports[group])
            except socket.gaierror as exc:
                raise ConfigError(f"cannot resolve {printable(args.host, 80)!r}: {exc.strerror}", key="--host") from exc
            except OSError as exc:
                raise ConfigError(f"cannot listen on {printable(args.host, 80)}:{ports[group]}: "
                                  f"{exc.strerror or exc}", key=f"--{group}-port") from exc
    except ConfigError:
        _close(sockets)
        raise
    return sockets


def _close(sockets: dict[str, list[socket.socket]]) -> None:
    for bound in sockets.values():
        for sock in bound:
            sock.close()


def stderr_logger() -> Any:
    """A structlog logger writing key=value lines to standard error (never to the protocol's stdout)."""
    import structlog

    return structlog.wrap_logger(
        structlog.PrintLogger(sys.stderr),
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True),
                    structlog.processors.KeyValueRenderer(key_order=["timestamp", "level", "event"])],
        context_class=dict, cache_logger_on_first_use=False)


def run_mcp(args: argparse.Namespace, out: TextIO) -> int:
    import asyncio

    try:
        import mcp  # noqa: F401  (an optional dependency: the 'host' extra)
    except ImportError:
        raise ConfigError("needs the MCP SDK: pip install 'ufo-mobile[host]'", key="mcp") from None
    from ufo_mobile.cli.serve_cmd import token_from_env
    from ufo_mobile.core.builder import open_device
    from ufo_mobile.host.mcp.limits import SessionLimits
    from ufo_mobile.host.mcp.server import NAMESPACES, is_loopback
    from ufo_mobile.host.mcp.state import MobileServerState

    groups = _groups(args.server)
    settings = device_settings(args)
    http = args.transport == "http"
    if args.max_sessions_per_client > args.max_sessions:
        raise ConfigError(f"is more than --max-sessions ({args.max_sessions})", key="--max-sessions-per-client")
    limits = SessionLimits(per_client=args.max_sessions_per_client, total=args.max_sessions,
                           idle_seconds=args.session_idle)
    token = token_from_env(TOKEN_ENV)  # out of the environment either way; stdio has no use for it
    sockets = _bind_all(args, groups) if http else {}
    if http and not is_loopback(args.host):
        more = "" if token else f", and {TOKEN_ENV} is not set: anyone who can reach it can drive the phone"
        err(f"warning: listening on {printable(args.host, 80)}, not only on this machine{more}")
    logger = stderr_logger()
    try:
        driver = open_device(settings, logger=logger)
        state = MobileServerState(driver, timeout=args.timeout, logger=logger)
        label = "the simulated phone" if settings.kind == "sim" else (settings.serial or "the only adb phone")

        def ready(listening: Listening) -> None:
            if not http:
                err(f"mcp: serving the {' and '.join(groups)} tools of {label} on stdio")
                return
            for group, url in listening.urls.items():
                also = "".join(f" and {other}" for other in listening.also.get(group, []))
                print(f"mcp {group} server ({NAMESPACES[group]}) listening on {url}{also}", file=out, flush=True)
            print(f"mcp: auth: {'bearer token from ' + TOKEN_ENV if token else 'off'}; sessions: "
                  f"{limits.per_client} per client address, {limits.total} in all, closed after "
                  f"{limits.idle_seconds:g} s idle", file=out, flush=True)

        try:
            asyncio.run(_serve_until_signal(state, groups, args.transport, sockets, ready,
                                            limits=limits, token=token))
        except DeviceError as exc:
            raise ConfigError(f"cannot open {label}: {exc}", key=DEVICE_KEY) from exc
    finally:
        _close(sockets)
    err(f"mcp: stopped; {label} closed")
    return EXIT_OK


async def _serve_until_signal(state: MobileServerState, groups: tuple[str, ...], transport: str,
                              sockets: dict[str, list[socket.socket]], ready: Callable[[Listening], None], *,
                              limits: SessionLimits, token: str | None) -> None:
    """Serve until Ctrl-C or SIGTERM asks to stop (then the phone is closed and this returns)."""
    import asyncio

    from ufo_mobile.host.mcp.server import serve

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, stop.set)
    try:
        await serve(state, groups, "stdio" if transport == "stdio" else "http", sockets=sockets, stop=stop,
                    ready=ready, limits=limits, token=token, log=lambda line: err(f"mcp: {line}"))
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)
