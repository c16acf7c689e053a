"""A real HTTP receiver on 127.0.0.1 in a thread of the test: it verifies each request with
the endpoint's secret by the `standardwebhooks` library (Standard Webhooks' own verifier, not
our code), as a customer's receiver would, answers the status the test scripts for it, and
records what it got."""

import json
import socket
import threading
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError


@dataclass
class Received:
    path: str
    headers: Message  # as received: names case-insensitive (`headers["webhook-id"]`)
    body: bytes
    status: int  # what the receiver answered
    signature_ok: bool | None = None

    @property
    def event(self) -> dict:
        return json.loads(self.body)


def verify_signature(secret: str, body: bytes, headers) -> bool:
    """`standardwebhooks.Webhook(secret).verify(body, headers)`: the signature over
    "<id>.<timestamp>.<body>", a timestamp within five minutes of now."""
    try:
        Webhook(secret).verify(body, dict(headers.items()))
    except WebhookVerificationError:
        return False
    return True


@dataclass
class Receiver:
    server: ThreadingHTTPServer
    statuses: list[int] = field(default_factory=list)  # answered in turn; then 200
    received: list[Received] = field(default_factory=list)
    # path → the secrets to verify with (ok when one of them verifies the request)
    secrets: dict[str, list[str]] = field(default_factory=dict)
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
            headers = self.headers
            receiver.arrived.set()
            if receiver.hold is not None:
                receiver.hold.wait(timeout=30)
            with receiver.lock:
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                known = receiver.secrets.get(self.path)
                ok = (
                    None
                    if known is None
                    else any(verify_signature(secret, body, headers) for secret in known)
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
    # A short poll: shutdown() at the end of each test waits for it (0.5 s by default).
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return receiver


@dataclass
class Dribbler:
    """A raw TCP receiver that reads the request, then answers one byte every `every`
    seconds: every socket read gets its byte in time, the answer takes minutes in all."""

    sock: socket.socket
    every: float
    arrived: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def start_dribbler(every: float = 0.3) -> Dribbler:
    listener = socket.create_server(("127.0.0.1", 0))
    dribbler = Dribbler(sock=listener, every=every)
    answer = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 400 + b"\r\n\r\n"

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(4096)
                dribbler.arrived.set()
                for byte in answer:
                    if dribbler.stop.wait(dribbler.every):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:
                return  # the client gave up: what the test expects

    def accept() -> None:
        while not dribbler.stop.is_set():
            try:
                conn, _address = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return dribbler


def clogged_listener(host: str, port: int) -> list[socket.socket]:
    """A socket on host:port that listens and never accepts, its backlog filled: a further
    connection gets no SYN-ACK, so connecting to it times out (like a firewalled host)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((host, port))
    listener.listen(0)
    held = [listener]
    for _ in range(4):
        filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        filler.settimeout(0.2)
        held.append(filler)
        try:
            filler.connect((host, port))
        except TimeoutError:
            return held  # the backlog is full
    raise AssertionError("the backlog never filled")
