"""Standard Webhooks 1.0 (https://www.standardwebhooks.com/): what a delivery carries.

Headers `webhook-id` (the event's id: the same for every delivery of it), `webhook-timestamp`
(unix seconds, when this attempt was signed) and `webhook-signature`: space-separated
`v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, one per valid secret (two while a
rotated secret's overlap runs). The id is signed, so a captured delivery cannot be replayed
under another id; receivers refuse timestamps more than five minutes away (a replay).

A secret is `whsec_` + base64 of its key bytes: what the standard libraries decode
(`standardwebhooks.Webhook(secret)`), and the key the HMAC is computed with.
"""

import base64
import binascii
import hashlib
import hmac
import json
import secrets

SCHEME = "v1"
SECRET_PREFIX = "whsec_"
KEY_BYTES = 32  # the spec allows 24 to 64


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()


def secret_key(secret: str) -> bytes:
    """The key bytes of a `whsec_<base64>` secret (ValueError for anything else)."""
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError("a signing secret starts with whsec_")
    try:
        return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except binascii.Error as exc:
        raise ValueError("a signing secret is whsec_ + base64") from exc


def body_of(envelope: dict) -> bytes:
    """The JSON body of an event: the same bytes for every delivery of it."""
    return json.dumps(envelope, separators=(",", ":"), sort_keys=True).encode()


def signature(secret: str, *, event_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64>` for one secret."""
    signed = f"{event_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return f"{SCHEME},{base64.b64encode(digest).decode()}"


def headers(
    *, signing_secrets: list[str], event_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The request's headers, signed with each of `signing_secrets` (the current one first)."""
    return {
        "Content-Type": "application/json",
        "User-Agent": "gpu-rental-webhooks/1",
        "webhook-id": event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(
            signature(secret, event_id=event_id, timestamp=timestamp, body=body)
            for secret in signing_secrets
        ),
    }
