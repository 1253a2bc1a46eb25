"""The phone model: apps as YAML screen graphs (``model``, ``loader``), laid out (``layout``, ``view``),
rendered (``render``, ``paint``) and driven by pixel coordinates (``simphone.SimPhone``)."""
