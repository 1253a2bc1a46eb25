"""The one place that builds a run (``builder.RunBuilder``): its models, phone, run writer, operator and
root agent, with what they are built from (``parts``) and how a run starts in its directory, new or
resumed (``start``)."""

from ufo_mobile.core.builder.parts import Models, RunParts
from ufo_mobile.core.builder.run_builder import RunBuilder, open_device, placed
from ufo_mobile.core.builder.start import Resumed

__all__ = ["Models", "Resumed", "RunBuilder", "RunParts", "open_device", "placed"]
