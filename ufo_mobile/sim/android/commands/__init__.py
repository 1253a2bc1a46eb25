"""The commands of the emulated device shell, one module per family (``am``, ``pm``, ``input``, ...)."""
