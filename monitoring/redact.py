"""Error texts shown to operators or stored for them never carry a configured secret.

An RPC provider's URL often holds its API key in the path (`https://…/v3/<key>`), and a
broker or database URL may hold a password: each configured URL is replaced by the name of
its setting, and any other URL loses its user and password."""

import re
from urllib.parse import urlsplit

from django.conf import settings

_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)


def _configured_urls() -> list[tuple[str, str]]:
    urls = [
        (url, f"RPC_URL_{key.upper()}")
        for key, url in getattr(settings, "PAYMENT_RPC_URLS", {}).items()
        if url
    ]
    for name in ("CELERY_BROKER_URL", "REDIS_URL"):
        url = getattr(settings, name, None)
        if url:
            urls.append((url, name))
    # Longest first: a URL that is a prefix of another must not leave the other's tail.
    return sorted(urls, key=lambda pair: len(pair[0]), reverse=True)


def _secret_parts(url: str) -> list[str]:
    """The URL itself, and its path and query alone (an HTTP client's error names the host
    and the path apart: `host='…', port=…): … with url: /v3/<key>`)."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    candidates = [url, url.rstrip("/"), path if len(path.strip("/")) >= 4 else ""]
    return [part for part in candidates if len(part) >= 4]


def redact(text: str) -> str:
    for url, name in _configured_urls():
        for part in sorted(set(_secret_parts(url)), key=len, reverse=True):
            text = text.replace(part, f"<{name}>")
    return _USERINFO.sub(r"\g<scheme>***@", text)


def describe_error(error: object) -> str:
    """`Type: message` of an exception (or the text given), redacted, on one line."""
    is_exception = isinstance(error, BaseException)
    text = f"{type(error).__name__}: {error}" if is_exception else str(error)
    return redact(" ".join(text.split()))
