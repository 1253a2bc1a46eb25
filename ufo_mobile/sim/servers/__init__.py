"""The device-side servers that let real clients drive the simulated phone: the ADB daemon (``adb``)
and the uiautomator2 server (``u2``), and an iPhone's WebDriverAgent (``wda``)."""

import ipaddress


def check_loopback(host: str, what: str) -> None:
    """Nothing when ``host`` is a loopback address (or ``localhost``); these servers have no
    authentication, so they never listen anywhere else.

    Raises:
        ValueError: ``host`` is not a loopback address (``what`` names the server).
    """
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"{what} has no authentication and listens on loopback only, not {host!r}")
