"""Answers for the small http.server handlers the tests and benches run (endpoints, providers, APIs)."""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str = "application/json",
         headers: dict[str, str] | None = None) -> None:
    """One whole response: the status, Content-Type, Content-Length, any other headers, then the body."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def send_json(handler: BaseHTTPRequestHandler, data: Any, status: int = 200) -> None:
    """`data` as a JSON response."""
    send(handler, status, json.dumps(data).encode())
