"""A client of ``python -m ufo_mobile serve`` (docs/serve.md): register, send one task, print its events.

    python examples/serve_client.py [ws://127.0.0.1:5000/ws]

With ``$UFO_MOBILE_SERVE_TOKEN`` set it sends the token as the service asks; unset, it sends no
Authorization header, as a service started without a token expects. Exit 0 when the task completed.
"""

import asyncio
import json
import os
import sys

from websockets.asyncio.client import connect


async def main(url: str) -> int:
    token = os.environ.get("UFO_MOBILE_SERVE_TOKEN")  # the service's token, if it was started with one
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with connect(url, additional_headers=headers) as ws:
        await ws.send(json.dumps({"type": "register", "client_id": "me", "status": "ok"}))
        task = {"type": "task", "session_id": "t1", "request": "Turn on Wi-Fi", "status": "continue"}
        await ws.send(json.dumps(task))
        async for frame in ws:
            message = json.loads(frame)
            print(message["type"], message["status"], message.get("result", {}).get("event", ""))
            if message["type"] == "task_end":
                return 0 if message["status"] == "completed" else 1
    return 1


sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "ws://127.0.0.1:5000/ws")))
