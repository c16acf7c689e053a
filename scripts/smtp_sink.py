"""A mail server that keeps what it is sent, for a stack that needs a real EMAIL_HOST (production
refuses to start without one): plain SMTP on a free 127.0.0.1 port, in a thread of the caller,
every message kept and readable as an `email.message.EmailMessage`.

Enough of RFC 5321 for smtplib (Django's SMTP backend): EHLO/HELO, MAIL, RCPT, DATA with dot
unstuffing, RSET, NOOP, QUIT. No TLS and no authentication: give the application
EMAIL_USE_TLS=0 and no EMAIL_HOST_USER.
"""

import email
import email.policy
import re
import socketserver
import threading
import time
from dataclasses import dataclass
from email.message import EmailMessage

ADDRESS = re.compile(r"<([^>]*)>")
MAX_LINE = 1 << 20


@dataclass(frozen=True)
class Mail:
    sender: str
    recipients: tuple[str, ...]
    message: EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message["Subject"] or "")

    def body(self) -> str:
        """The text of the message (its plain-text part when there are several)."""
        part = self.message.get_body(preferencelist=("plain", "html"))
        return part.get_content() if part is not None else ""


class _Session(socketserver.StreamRequestHandler):
    server: "_Server"

    def reply(self, text: str) -> None:
        self.wfile.write(text.encode("ascii") + b"\r\n")

    def handle(self) -> None:
        self.reply("220 127.0.0.1 sink ESMTP")
        sender, recipients = "", []
        while line := self.rfile.readline(MAX_LINE):
            command = line.decode("utf-8", "replace").strip()
            verb = command[:4].upper()
            if verb == "EHLO":
                self.reply("250-127.0.0.1")
                self.reply("250-8BITMIME")
                self.reply("250 SMTPUTF8")
            elif verb == "HELO":
                self.reply("250 127.0.0.1")
            elif verb == "MAIL":
                found = ADDRESS.search(command)
                sender, recipients = (found.group(1) if found else ""), []
                self.reply("250 OK")
            elif verb == "RCPT":
                found = ADDRESS.search(command)
                if not found:
                    self.reply("501 Syntax: RCPT TO:<address>")
                    continue
                recipients.append(found.group(1))
                self.reply("250 OK")
            elif verb == "DATA":
                if not recipients:
                    self.reply("503 RCPT first")
                    continue
                self.reply("354 End data with <CR><LF>.<CR><LF>")
                self.server.keep(sender, recipients, self._data())
                sender, recipients = "", []
                self.reply("250 OK: kept")
            elif verb == "RSET":
                sender, recipients = "", []
                self.reply("250 OK")
            elif verb == "NOOP":
                self.reply("250 OK")
            elif verb == "QUIT":
                self.reply("221 Bye")
                return
            else:
                self.reply("502 Command not implemented")

    def _data(self) -> bytes:
        lines = []
        while line := self.rfile.readline(MAX_LINE):
            if line in (b".\r\n", b".\n"):
                break
            lines.append(line[1:] if line.startswith(b".") else line)  # dot unstuffing
        return b"".join(lines)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, sink: "SmtpSink"):
        self.sink = sink
        super().__init__(("127.0.0.1", 0), _Session)

    def keep(self, sender: str, recipients: list[str], data: bytes) -> None:
        # Read with Python's line endings, as a mail client shows it.
        data = data.replace(b"\r\n", b"\n")
        message = email.message_from_bytes(data, policy=email.policy.default)
        self.sink._add(Mail(sender=sender, recipients=tuple(recipients), message=message))


class SmtpSink:
    """start() serves in a daemon thread; stop() closes it. mails() is what arrived."""

    def __init__(self):
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._mails: list[Mail] = []

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        assert self._server is not None, "the sink is not started"
        return self._server.server_address[1]

    def start(self) -> "SmtpSink":
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"smtp-sink:{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _add(self, mail: Mail) -> None:
        with self._lock:
            self._mails.append(mail)

    def mails(self) -> list[Mail]:
        """Every mail that arrived so far, in order (a copy)."""
        with self._lock:
            return list(self._mails)

    def to(self, address: str) -> list[Mail]:
        """What arrived for `address` (a recipient of the envelope), in order."""
        return [mail for mail in self.mails() if address.lower() in map(str.lower, mail.recipients)]

    def wait_for(self, address: str, subject: str | re.Pattern, *, timeout: float) -> Mail:
        """The first mail to `address` whose subject contains `subject` (or matches the
        pattern); AssertionError naming what did arrive when none does within `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            for mail in self.to(address):
                if (
                    subject.search(mail.subject)
                    if isinstance(subject, re.Pattern)
                    else subject in mail.subject
                ):
                    return mail
            if time.monotonic() > deadline:
                arrived = [f"{mail.recipients} {mail.subject!r}" for mail in self.mails()]
                raise AssertionError(
                    f"no mail to {address} with subject {subject!r} after {timeout:.0f} s; "
                    f"the sink has: {arrived or 'nothing'}"
                )
            time.sleep(0.2)
