"""Calling a tool of our MCP server through the ``mcp`` SDK's client, as the tests do."""

from __future__ import annotations

from typing import Any

from mcp import Client


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    """The tool's structured result (a wrapped ``{"result": ...}`` unwrapped); the call must succeed."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    content = result.structured_content
    assert content is not None
    return content["result"] if set(content) == {"result"} else content
