"""The phones of a batch: ``--devices`` parsed (no I/O), then resolved against adb servers (bounded I/O).

Spec grammar (``--devices``, comma-separated items, which may be mixed)::

    sim:N              N simulated phones, in-process (sim-1 .. sim-N); ``sim`` is ``sim:1``
    SERIAL             a phone on the local adb server (``--adb-port``), e.g. R58M41ABCDE, emulator-5554
    HOST:PORT          a phone served over TCP (Wi-Fi debugging, an emulated adbd), connected through
                       the local adb server as ``adb connect HOST:PORT`` does
    SERIAL@HOST:PORT   a phone on a remote adb server (what ``adb -H HOST -P PORT -s SERIAL`` reaches)
    @HOST:PORT         every ready phone of that remote adb server
    @                  every ready phone of the local adb server
    wda:URL            an iPhone, through its WebDriverAgent at URL (wda:http://127.0.0.1:8100)

A bad spec is a ``ConfigError`` naming ``--devices``; a phone that is not there (not listed, not
ready, ``adb connect`` refused) is one too, raised by ``resolve`` before any task starts.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Literal

from ufo_mobile.core.device.blocking import call_blocking
from ufo_mobile.errors import ConfigError, DeviceError
from ufo_mobile.safe_text import printable

KEY = "--devices"
MAX_SIMS = 256
LOCAL_HOST = "127.0.0.1"
_SERIAL = re.compile(r"[A-Za-z0-9._\-:\[\]]{1,200}")
_HOSTNAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9\-.]{0,251}[A-Za-z0-9])?")


@dataclass(frozen=True)
class Phone:
    """One phone of the pool, picklable: enough for any process (a Ray worker) to reach it."""

    kind: Literal["sim", "adb", "wda"]
    serial: str  # sim-N for a simulated phone; the adb serial (or host:port); an iPhone's WebDriverAgent URL
    adb_host: str = LOCAL_HOST  # the adb server it is on
    adb_port: int | None = None  # None: the local default ($ANDROID_ADB_SERVER_PORT or 5037)
    remote: bool = False  # on a remote adb server (SERIAL@HOST:PORT), not the local one

    @property
    def name(self) -> str:
        """How the phone is shown and advertised: ``sim-2``, ``R58M41``, ``127.0.0.1:5555``, ``R58M41@h:5037``."""
        if self.remote:
            return f"{self.serial}@{self.adb_host}:{self.adb_port}"
        if self.kind == "wda":
            return f"wda:{self.serial}"
        return self.serial

    @property
    def resource(self) -> str:
        """The Ray custom resource a node holding this phone advertises (``ray start --resources``)."""
        return f"phone:{self.name}"

    def device_overrides(self, task_kind: str, driver: str | None) -> dict[str, Any]:
        """The task's ``device`` settings overridden for this phone (its sim settings kept)."""
        if self.kind == "sim":
            return {"kind": "sim"}
        if self.kind == "wda":  # an iPhone has one driver: --driver is for Android phones
            return {"kind": "wda", "serial": self.serial}
        kind = driver or (task_kind if task_kind in ("adb", "u2") else "adb")
        return {"kind": kind, "serial": self.serial, "adb_host": self.adb_host, "adb_port": self.adb_port}


@dataclass(frozen=True)
class Source:
    """One item of ``--devices`` before resolution."""

    kind: Literal["sim", "serial", "tcp", "remote", "server", "wda"]
    count: int = 0  # sim
    serial: str = ""  # serial, remote; HOST:PORT for tcp
    host: str = ""  # remote, server ("" for the local server)
    port: int | None = None


def _bad(item: str, why: str) -> ConfigError:
    return ConfigError(f"{printable(item, 80)!r}: {why} (expected sim:N, SERIAL, HOST:PORT, SERIAL@HOST:PORT, "
                       "@HOST:PORT, @ or wda:URL)", key=KEY)


def _host_port(item: str, text: str) -> tuple[str, int]:
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise _bad(item, "a host and a port are needed")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise _bad(item, f"{printable(port_text, 20)!r} is not a port (1-65535)")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        if not _HOSTNAME.fullmatch(bare):
            raise _bad(item, f"{printable(host, 80)!r} is not a host name or address") from None
    return host, int(port_text)


def parse_item(item: str) -> Source:
    """One item of ``--devices``: ``sim``, ``sim:N``, a serial, ``HOST:PORT``, ``SERIAL@HOST:PORT``,
    ``@HOST:PORT`` (every phone of that adb server) or ``@`` (every phone of the local one).
    A malformed item is a ``ConfigError``."""
    if item == "sim":
        return Source("sim", count=1)
    if item.startswith("sim:"):
        count = item[4:]
        if not count.isdigit() or not 0 < int(count) <= MAX_SIMS:
            raise _bad(item, f"the number of simulated phones must be 1-{MAX_SIMS}")
        return Source("sim", count=int(count))
    if item.startswith("wda:"):
        url = item[4:].rstrip("/")
        scheme, sep, rest = url.partition("://")
        if scheme not in ("http", "https") or not sep:
            raise _bad(item, "an iPhone is named by its WebDriverAgent's URL: wda:http://HOST:PORT")
        _host_port(item, rest.split("/", 1)[0])
        return Source("wda", serial=url)
    if item == "@":
        return Source("server")
    if "@" in item:
        serial, _, where = item.partition("@")
        host, port = _host_port(item, where)
        if not serial:
            return Source("server", host=host, port=port)
        if not _SERIAL.fullmatch(serial):
            raise _bad(item, "not a device serial")
        return Source("remote", serial=serial, host=host, port=port)
    if not _SERIAL.fullmatch(item):
        raise _bad(item, "not a device serial")
    if ":" in item:
        host, port = _host_port(item, item)
        return Source("tcp", serial=f"{host}:{port}", host=host, port=port)
    return Source("serial", serial=item)


def parse_devices(text: str) -> list[Source]:
    """``--devices`` as a list of sources; the same phone named twice is an error."""
    items = [part.strip() for part in text.split(",")]
    if not text.strip() or any(not part for part in items):
        raise ConfigError(f"{printable(text, 80)!r}: an empty item (expected a comma-separated list such as "
                          "sim:4 or SERIAL,HOST:PORT)", key=KEY)
    sources = [parse_item(part) for part in items]
    named = [(s.kind, s.serial, s.host, s.port) for s in sources if s.kind != "sim"]
    twice = {n for n in named if named.count(n) > 1}
    if twice:
        raise ConfigError(f"{printable(text, 80)!r}: a phone is named twice", key=KEY)
    if sum(1 for s in sources if s.kind == "sim") > 1:
        raise ConfigError(f"{printable(text, 80)!r}: give the simulated phones once, as sim:N", key=KEY)
    return sources


def sim_phones(count: int) -> list[Phone]:
    """``count`` simulated phones, named ``sim-1``, ``sim-2``, ..."""
    return [Phone("sim", f"sim-{n}") for n in range(1, count + 1)]


# --- resolution (blocking adb calls, each bounded) -------------------------------------------


class AdbPool:
    """The adb servers a batch talks to, each asked through an ``adbutils.AdbClient``."""

    def __init__(self, local_port: int | None, timeout: float) -> None:
        self.local_port = local_port
        self.timeout = timeout
        self._clients: dict[tuple[str, int | None], Any] = {}

    def client(self, host: str = LOCAL_HOST, port: int | None = None) -> Any:
        """The client of the adb server at ``host:port`` (the local one by default), made once."""
        import adbutils

        key = (host, port if host != LOCAL_HOST or port is not None else self.local_port)
        if key not in self._clients:
            self._clients[key] = adbutils.AdbClient(host=key[0], port=key[1], socket_timeout=self.timeout)
        return self._clients[key]


def _where(client: Any) -> str:
    return f"the adb server at {client.host}:{client.port}"


def _states(client: Any) -> dict[str, str]:
    try:
        return {info.serial: info.state for info in client.list()}
    except Exception as exc:
        raise ConfigError(f"{_where(client)} cannot be reached ({type(exc).__name__}: "
                          f"{printable(str(exc), 200)})", key=KEY) from exc


def _ready(client: Any, serial: str, item: str) -> None:
    states = _states(client)
    state = states.get(serial)
    if state == "device":
        return
    seen = ", ".join(f"{s} ({st})" for s, st in sorted(states.items())) or "none"
    why = "is not listed by" if state is None else f"is {state} on"
    raise ConfigError(f"{printable(item, 80)}: the phone {why} {_where(client)} (seen: {printable(seen, 300)})",
                      key=KEY)


def _connect(client: Any, address: str, timeout: float) -> None:
    """``adb connect HOST:PORT`` through the local server; a refusal is a one-line error."""
    try:
        answer = str(client.connect(address, timeout=timeout)).strip()
    except Exception as exc:
        raise ConfigError(f"adb connect {address}: {type(exc).__name__}: {printable(str(exc), 200)}", key=KEY) from exc
    if not answer.startswith(("connected to", "already connected to")):
        raise ConfigError(f"adb connect {address}: {printable(answer or 'no answer', 200)}", key=KEY)
    try:
        client.wait_for(address, state="device", timeout=timeout)
    except Exception as exc:
        raise ConfigError(f"adb connect {address}: the phone did not come online within {timeout:g} s "
                          f"({type(exc).__name__})", key=KEY) from exc


def _wda_ready(url: str, timeout: float) -> None:
    """The iPhone's WebDriverAgent answers and is ready; else a one-line error saying what is wrong."""
    from ufo_mobile.core.device.discovery import wda_row

    row = wda_row(url, timeout=timeout)
    if row.state != "ready":
        raise ConfigError(f"wda:{printable(url, 100)}: {row.state}: {printable(row.note, 300)}", key=KEY)


def resolve_blocking(sources: list[Source], adb: AdbPool) -> list[Phone]:
    """The phones ``sources`` name, each checked to be there and ready. Blocking; see ``resolve``."""
    phones: list[Phone] = []
    for source in sources:
        if source.kind == "sim":
            phones += sim_phones(source.count)
        elif source.kind == "wda":
            _wda_ready(source.serial, adb.timeout)
            phones.append(Phone("wda", source.serial))
        elif source.kind == "serial":
            _ready(adb.client(), source.serial, source.serial)
            phones.append(Phone("adb", source.serial, adb_port=adb.local_port))
        elif source.kind == "tcp":
            _connect(adb.client(), source.serial, adb.timeout)
            phones.append(Phone("adb", source.serial, adb_port=adb.local_port))
        elif source.kind == "remote":
            client = adb.client(source.host, source.port)
            _ready(client, source.serial, f"{source.serial}@{source.host}:{source.port}")
            phones.append(Phone("adb", source.serial, source.host, source.port, remote=True))
        else:
            client = adb.client(source.host or LOCAL_HOST, source.port)
            ready = sorted(s for s, state in _states(client).items() if state == "device")
            if not ready:
                raise ConfigError(f"no phone is ready on {_where(client)}", key=KEY)
            remote = bool(source.host)
            phones += [Phone("adb", s, source.host or LOCAL_HOST, source.port if remote else adb.local_port,
                             remote=remote) for s in ready]
    names = [p.name for p in phones]
    if len(set(names)) != len(names):
        raise ConfigError("a phone is named twice (once by itself, once as one of a server's phones)", key=KEY)
    return phones


async def resolve(sources: list[Source], *, adb_port: int | None, bound: float = 20.0) -> list[Phone]:
    """The phones of ``--devices``: connected (``HOST:PORT``) and checked ready, within a bound."""
    if all(s.kind == "sim" for s in sources):
        return resolve_blocking(sources, AdbPool(adb_port, bound))
    def attempt() -> list[Phone] | ConfigError:
        try:
            return resolve_blocking(sources, AdbPool(adb_port, bound))
        except ConfigError as exc:  # handed back as it is (the thread boundary would wrap it)
            return exc

    limit = bound * (2 * len(sources) + 1)  # each adb call is bounded by ``bound``; this bounds them all
    try:
        found = await call_blocking(attempt, limit=limit, serial="-", what="find the phones")
    except DeviceError as exc:  # the bound itself, or adbutils failing in a way not foreseen
        raise ConfigError(f"the phones could not be checked: {exc}", key=KEY) from exc
    if isinstance(found, ConfigError):
        raise found
    return found


def probe_blocking(phone: Phone, timeout: float) -> bool:
    """Whether ``phone`` still answers (listed as ready, and ``echo`` comes back). Blocking."""
    if phone.kind == "sim":
        return True
    if phone.kind == "wda":
        from ufo_mobile.core.device.discovery import wda_row

        return wda_row(phone.serial, timeout=timeout).state == "ready"
    import adbutils

    try:
        client = adbutils.AdbClient(host=phone.adb_host, port=phone.adb_port, socket_timeout=timeout)
        if {i.serial: i.state for i in client.list()}.get(phone.serial) != "device":
            return False
        answer = client.device(phone.serial).shell("echo ufo-probe", timeout=timeout)
        return "ufo-probe" in str(answer)
    except Exception:  # noqa: BLE001 - any failure to reach it means it is not usable
        return False


async def probe(phone: Phone, bound: float = 10.0) -> bool:
    """``probe_blocking`` on a daemon thread, bounded: a phone that does not answer in time is gone."""
    try:
        return await call_blocking(probe_blocking, phone, bound, limit=bound * 2 + 1, serial=phone.name,
                                   what="probe")
    except DeviceError:
        return False


def unresolved(sources: list[Source]) -> list[Phone]:
    """The phones ``sources`` name, as a Ray cluster's nodes advertise them (nothing is checked here:
    the phones are on the nodes, not necessarily reachable from the driver)."""
    phones: list[Phone] = []
    for source in sources:
        if source.kind == "sim":
            phones += sim_phones(source.count)
        elif source.kind == "wda":
            phones.append(Phone("wda", source.serial))
        elif source.kind in ("serial", "tcp"):
            phones.append(Phone("adb", source.serial))
        elif source.kind == "remote":
            phones.append(Phone("adb", source.serial, source.host, source.port, remote=True))
        else:
            raise ConfigError("a whole adb server (@HOST:PORT, @) cannot be named with --address: name its phones, "
                              "or leave --devices out to use every phone the Ray nodes advertise", key=KEY)
    return phones
