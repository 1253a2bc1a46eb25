"""``mcp --host localhost`` (what UFO's ``config/ufo/mcp.yaml`` names) listens on both 127.0.0.1 and
::1 with one port per group, so a client that resolves ``localhost`` to either reaches it; the
``mcp`` SDK's own client calls a tool on each address."""

from __future__ import annotations

import errno
import signal
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from mcp import Client

from tests.faults.conftest import Cli
from tests.mcp_calls import call
from ufo_mobile.host.mcp.server import bind_host

pytestmark = pytest.mark.integration


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")


@needs_ipv6
async def test_localhost_is_served_on_127_0_0_1_and_on_ipv6_loopback(tmp_path: Path) -> None:
    server = Cli("mcp", "--device", "sim", "--host", "localhost", "--data-port", "0", "--action-port", "0",
                 cwd=tmp_path, env={"HOME": str(tmp_path)})
    try:
        line = server.wait_line("mcp data server (MobileDataCollector) listening on ")
        urls = line.strip().split(" listening on ")[1].split(" and ")
        assert [urlsplit(url).hostname for url in urls] == ["127.0.0.1", "::1"]
        port = urlsplit(urls[0]).port
        assert port == urlsplit(urls[1]).port
        for url in (*urls, f"http://localhost:{port}/mcp"):
            async with Client(url, mode="legacy") as client:
                info = await call(client, "get_device_info")
                assert info["success"] is True, (url, info)
    finally:
        server.signal(signal.SIGTERM)
        code, _, err = server.finish()
    assert code == 0, err


@needs_ipv6
def test_bind_host_binds_both_loopbacks_on_one_port_and_other_hosts_once() -> None:
    both = bind_host("LocalHost", 0)
    try:
        assert [s.family for s in both] == [socket.AF_INET, socket.AF_INET6]
        assert [s.getsockname()[:2] for s in both] == [("127.0.0.1", both[0].getsockname()[1]),
                                                       ("::1", both[0].getsockname()[1])]
    finally:
        for sock in both:
            sock.close()
    single = bind_host("127.0.0.1", 0)
    try:
        assert len(single) == 1
    finally:
        single[0].close()


@needs_ipv6
def test_a_port_taken_on_ipv6_loopback_is_refused_and_nothing_stays_bound() -> None:
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as taken:
        taken.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        taken.bind(("::1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(OSError) as refused:
            bind_host("localhost", port)
        assert refused.value.errno == errno.EADDRINUSE and f"[::1]:{port}" in str(refused.value)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as again:
            again.bind(("127.0.0.1", port))  # the IPv4 half was let go
