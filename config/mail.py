"""The mailer of a machine without an SMTP server (`make run`): each email is logged whole, as
one INFO record of the "mail" logger, readable as the customer would read it.

Django's console backend wrote the raw MIME message to standard output: in the Celery worker,
which logs standard output line by line as WARNING, an email came out as a dozen warnings,
its accented text quoted-printable ("=C3=A8") and its long lines cut with "="."""

import logging

from django.core.mail.backends.base import BaseEmailBackend

logger = logging.getLogger("mail")


def readable(message) -> str:
    """Headers, the plain-text body as written, then what else the email carries."""
    lines = [
        f"From: {message.from_email}",
        f"To: {', '.join(message.to)}",
        *([f"Cc: {', '.join(message.cc)}"] if message.cc else []),
        *([f"Reply-To: {', '.join(message.reply_to)}"] if message.reply_to else []),
        f"Subject: {message.subject}",
        "",
        message.body,
    ]
    for alternative in getattr(message, "alternatives", []):
        lines.append(f"[alternative part: {alternative.mimetype}, not shown]")
    for attachment in message.attachments:
        name = getattr(attachment, "filename", None) or "unnamed"
        lines.append(f"[attachment: {name}]")
    return "\n".join(lines)


class ConsoleEmailBackend(BaseEmailBackend):
    def send_messages(self, email_messages) -> int:
        for message in email_messages:
            logger.info("Email not sent (no EMAIL_HOST), as it would read:\n%s", readable(message))
        return len(email_messages)
