"""The task the embedded-stack tests send: a worker started with `-I tests.embedded.probe` runs
it. Each run appends one line, "producer sequence pid time", to $EMBEDDED_PROBE_FILE (one O_APPEND
write, so the lines of the worker's processes never interleave)."""

import os
import time

from celery import shared_task


@shared_task(name="tests.embedded.probe.record", acks_late=True)
def record(producer: int, sequence: int, padding: str = "") -> None:
    line = f"{producer} {sequence} {os.getpid()} {time.time():.3f}\n".encode()
    fd = os.open(os.environ["EMBEDDED_PROBE_FILE"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


@shared_task(name="tests.embedded.probe.send_mail")
def send_mail(subject: str, body: str, recipient: str) -> None:
    """An email sent as the worker sends the site's (tests/embedded/test_console_emails.py)."""
    from django.core.mail import send_mail as django_send_mail

    django_send_mail(subject, body, None, [recipient])
