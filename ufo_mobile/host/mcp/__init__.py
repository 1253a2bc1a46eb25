"""The MCP device server: a drop-in for UFO's mobile MCP servers (its data and action tools), with
bounded sessions."""
