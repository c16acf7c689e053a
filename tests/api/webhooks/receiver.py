"""A real HTTP receiver on 127.0.0.1 in a thread of the test: it verifies each request's
signature with the endpoint's secret, as a customer's receiver would, answers the status the
test scripts for it, and records what it got."""

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int  # what the receiver answered
    signature_ok: bool | None = None

    @property
    def event(self) -> dict:
        return json.loads(self.body)


def verify_signature(secret: str, body: bytes, headers: dict[str, str], now: float) -> bool:
    """The README's snippet: HMAC-SHA256 over "<timestamp>.<body>", five minutes at most."""
    timestamp = headers.get("Webhook-Timestamp", "")
    if not timestamp.isdigit() or abs(now - int(timestamp)) > 300:
        return False
    expected = hmac.new(
        secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256
    ).hexdigest()
    return hmac.compare_digest(headers.get("Webhook-Signature", ""), f"v1={expected}")


@dataclass
class Receiver:
    server: ThreadingHTTPServer
    statuses: list[int] = field(default_factory=list)  # answered in turn; then 200
    received: list[Received] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)  # path → secret, for verification
    hold: threading.Event | None = None  # while set to an Event, requests wait for it
    arrived: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def answered(self, status: int = 200) -> list[Received]:
        return [r for r in self.received if r.status == status]


def start_receiver() -> Receiver:
    receiver: Receiver | None = None

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            headers = {name: value for name, value in self.headers.items()}
            receiver.arrived.set()
            if receiver.hold is not None:
                receiver.hold.wait(timeout=30)
            with receiver.lock:
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                secret = receiver.secrets.get(self.path)
                ok = (
                    None if secret is None else verify_signature(secret, body, headers, time.time())
                )
                receiver.received.append(Received(self.path, headers, body, status, ok))
            payload = b'{"ok":true}' if status < 300 else b"nope"
            self.send_response(status)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver = Receiver(server=server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver
