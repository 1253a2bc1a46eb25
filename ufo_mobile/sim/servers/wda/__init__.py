"""The emulated WebDriverAgent: the simulated phone served as an iPhone's WDA over HTTP on 127.0.0.1
(``server.EmulatedWda``), its screen as WDA's page source (``source``), and the bundle ids the
emulated iPhone shows its apps under (``BUNDLE_IDS``)."""

from ufo_mobile.sim.servers.wda.server import BUNDLE_IDS, IPHONE_SIZE, EmulatedWda, WdaError, WdaLimits

__all__ = ["BUNDLE_IDS", "IPHONE_SIZE", "EmulatedWda", "WdaError", "WdaLimits"]
