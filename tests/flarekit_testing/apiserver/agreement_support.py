"""Requests to either backend of the agreement tests, as any HTTP client sends them."""

from __future__ import annotations

import json
from typing import Any

import urllib3


class Answer:
    """One HTTP answer: status, headers and the body (parsed when JSON)."""

    def __init__(self, reply: urllib3.BaseHTTPResponse) -> None:
        self.status = reply.status
        self.headers = reply.headers
        self.text = reply.data.decode()
        try:
            self.body: Any = json.loads(self.text)
        except ValueError:
            self.body = None


def send(
    server: Any,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    **headers: str,
) -> Answer:
    """One request with the server's admin token, the body sent as JSON."""
    pool = urllib3.PoolManager(ca_certs=str(server.ca_path))
    sent = {"Content-Type": content_type, "Authorization": f"Bearer {server.token}", **headers}
    data = json.dumps(body) if body is not None else None
    return Answer(pool.request(method, server.url + path, body=data, headers=sent, retries=False))
