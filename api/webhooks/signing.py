"""Signatures: `Webhook-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`.

The receiver recomputes it over the raw body with the endpoint's secret, compares in constant
time, and refuses timestamps older than five minutes (a replayed request).
"""

import hashlib
import hmac
import json

SCHEME = "v1"
TOLERANCE_SECONDS = 300


def body_of(envelope: dict) -> bytes:
    """The JSON body of an event: the same bytes for every delivery of it."""
    return json.dumps(envelope, separators=(",", ":"), sort_keys=True).encode()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    signed = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def headers(*, secret: str, event_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": "gpu-rental-webhooks/1",
        "Webhook-Id": event_id,
        "Webhook-Timestamp": str(timestamp),
        "Webhook-Signature": f"{SCHEME}={signature(secret, timestamp, body)}",
    }


def verify(*, secret: str, body: bytes, timestamp: str, signature_header: str, now: float) -> bool:
    """What a receiver does (the README's snippet does the same in a few lines)."""
    if not timestamp.isascii() or not timestamp.isdigit():
        return False
    if abs(now - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    expected = f"{SCHEME}={signature(secret, int(timestamp), body)}"
    return any(
        hmac.compare_digest(expected, candidate.strip())
        for candidate in signature_header.split(" ")
    )
