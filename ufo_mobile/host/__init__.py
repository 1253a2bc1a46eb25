"""Ways in for a session host: the in-process API (UFO's state protocol), the AIP task service and
the MCP device server."""
