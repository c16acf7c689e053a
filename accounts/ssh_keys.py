"""SSH public keys that customers give for their machines: parsed and checked, never trusted.

A key is one OpenSSH line, ``type base64-body [comment]``, as in a ``.pub`` file. The body is
checked down to its content (the wire format of RFC 4253 section 6.6, RFC 5656 and RFC 8709), so
that a key which would be refused by the machine's sshd is refused here first, with a message that
says what to do.
"""

import base64
import binascii
import hashlib
import unicodedata
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

ALLOWED_KEY_TYPES = (
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
)

MAX_LINE_LENGTH = 16 * 1024
MAX_COMMENT_LENGTH = 200
MIN_RSA_BITS = 2048

ED25519_KEY_BYTES = 32
# Bytes in one coordinate of each curve's points, and the key size ssh-keygen reports.
CURVES = {"nistp256": (32, 256), "nistp384": (48, 384), "nistp521": (66, 521)}

# Characters that str.splitlines() treats as a line break.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
# How much of an unknown type is repeated back in the message.
SHOWN_TYPE_LENGTH = 40

AGAIN = _("Copy the whole line again from the .pub file.")


@dataclass(frozen=True)
class SshPublicKey:
    key_type: str
    body: str
    comment: str = ""
    bits: int | None = None

    @property
    def line(self) -> str:
        """The key as one normalised authorized_keys line."""
        parts = [self.key_type, self.body]
        if self.comment:
            parts.append(self.comment)
        return " ".join(parts)

    @property
    def fingerprint(self) -> str:
        """The SHA256 fingerprint, exactly as ``ssh-keygen -lf`` prints it."""
        digest = hashlib.sha256(base64.b64decode(self.body)).digest()
        return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def parse_ssh_public_key(text: str) -> SshPublicKey:
    """Parse one OpenSSH public key line; raise ValidationError saying what is wrong with it."""
    text = text.strip()
    if not text:
        raise ValidationError(_("Paste your SSH public key."), code="empty")
    if "PRIVATE KEY" in text or text.startswith("PuTTY-User-Key-File-"):
        raise ValidationError(
            _("This is a private key. Never share it: paste the public key, the .pub file."),
            code="private_key",
        )
    if len(text) > MAX_LINE_LENGTH:
        raise ValidationError(
            _("This is too long for an SSH public key (at most %(limit)s characters)."),
            code="too_long",
            params={"limit": MAX_LINE_LENGTH},
        )
    if any(char in LINE_BREAKS for char in text):
        raise ValidationError(_("Paste one key only, on a single line."), code="multiple_lines")
    if any(unicodedata.category(char) in {"Cc", "Cs"} and char != "\t" for char in text):
        raise ValidationError(
            _("The key contains characters that cannot be part of an SSH public key."),
            code="invalid_characters",
        )

    parts = text.split(maxsplit=2)
    key_type = parts[0]
    if key_type not in ALLOWED_KEY_TYPES:
        shown = key_type
        if len(shown) > SHOWN_TYPE_LENGTH:
            shown = shown[:SHOWN_TYPE_LENGTH] + "…"
        raise ValidationError(
            _(
                "“%(key_type)s” is not a supported key type. The line must start with one of: "
                "%(allowed)s."
            ),
            code="unknown_type",
            params={"key_type": shown, "allowed": ", ".join(ALLOWED_KEY_TYPES)},
        )
    if len(parts) < 2:
        raise ValidationError(
            _("The key is incomplete: the long part after %(key_type)s is missing. %(again)s"),
            code="missing_body",
            params={"key_type": key_type, "again": AGAIN},
        )
    comment = parts[2] if len(parts) == 3 else ""
    if any(word in ALLOWED_KEY_TYPES for word in comment.split()):
        raise ValidationError(_("Paste one key only, on a single line."), code="multiple_keys")
    if len(comment) > MAX_COMMENT_LENGTH:
        raise ValidationError(
            _("The comment after the key is too long (at most %(limit)s characters)."),
            code="comment_too_long",
            params={"limit": MAX_COMMENT_LENGTH},
        )

    blob = _decode_body(parts[1])
    bits = _check_blob(key_type, blob)
    return SshPublicKey(key_type=key_type, body=parts[1], comment=comment, bits=bits)


def stored_ssh_key(line: str) -> SshPublicKey | None:
    """A key line kept on an account or an order, parsed; None when there is none, or when
    today's checks refuse it (the customer is then asked for a key again)."""
    if not line:
        return None
    try:
        return parse_ssh_public_key(line)
    except ValidationError:
        return None


def validate_ssh_public_key(value: str) -> None:
    """Field validator: accept only one valid SSH public key line."""
    parse_ssh_public_key(value)


def _decode_body(body: str) -> bytes:
    try:
        blob = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        blob = None
    # Strict: only the one encoding ssh-keygen writes (no stray padding, no spare bits).
    if not blob or base64.b64encode(blob).decode("ascii") != body:
        raise ValidationError(
            _("The key is damaged: its long middle part is not valid base64. %(again)s"),
            code="invalid_base64",
            params={"again": AGAIN},
        )
    return blob


class _Truncated(Exception):
    pass


class _Reader:
    """Reads the length-prefixed strings of SSH's wire format (RFC 4251 section 5)."""

    def __init__(self, blob: bytes):
        self.blob = blob
        self.offset = 0

    def string(self) -> bytes:
        if self.offset + 4 > len(self.blob):
            raise _Truncated
        length = int.from_bytes(self.blob[self.offset : self.offset + 4], "big")
        start = self.offset + 4
        if start + length > len(self.blob):
            raise _Truncated
        self.offset = start + length
        return self.blob[start : self.offset]

    @property
    def at_end(self) -> bool:
        return self.offset == len(self.blob)


def _check_blob(key_type: str, blob: bytes) -> int:
    """Check the decoded body against its declared type; return the key size in bits."""
    reader = _Reader(blob)
    try:
        if reader.string() != key_type.encode("ascii"):
            raise _mismatch(key_type)
        if key_type == "ssh-rsa":
            bits = _check_rsa(key_type, reader)
        elif key_type in {"ssh-ed25519", "sk-ssh-ed25519@openssh.com"}:
            if len(reader.string()) != ED25519_KEY_BYTES:
                raise _invalid(key_type)
            bits = 256
        else:
            bits = _check_ecdsa(key_type, reader)
        if key_type.startswith("sk-"):
            reader.string()  # the security key's application, such as "ssh:"
    except _Truncated:
        raise ValidationError(
            _("The key is incomplete: part of it is missing. %(again)s"),
            code="truncated",
            params={"again": AGAIN},
        ) from None
    if not reader.at_end:
        raise _invalid(key_type)
    return bits


def _check_rsa(key_type: str, reader: _Reader) -> int:
    exponent, modulus = reader.string(), reader.string()
    # mpints are two's complement: a set high bit would make them negative.
    if not exponent or not modulus or exponent[0] & 0x80 or modulus[0] & 0x80:
        raise _invalid(key_type)
    if int.from_bytes(exponent, "big") < 3:
        raise _invalid(key_type)
    bits = int.from_bytes(modulus, "big").bit_length()
    if bits < MIN_RSA_BITS:
        raise ValidationError(
            _(
                "This RSA key has %(bits)s bits, and at least %(minimum)s are needed. "
                "Make a stronger key with: ssh-keygen -t ed25519"
            ),
            code="weak_rsa",
            params={"bits": bits, "minimum": MIN_RSA_BITS},
        )
    return bits


def _check_ecdsa(key_type: str, reader: _Reader) -> int:
    # "ecdsa-sha2-nistp256" and "sk-ecdsa-sha2-nistp256@openssh.com" both name nistp256.
    curve = key_type.removesuffix("@openssh.com").rsplit("-", 1)[1]
    if reader.string() != curve.encode("ascii"):
        raise _mismatch(key_type)
    coordinate_bytes, bits = CURVES[curve]
    point = reader.string()
    # OpenSSH writes points uncompressed: 0x04, then X and Y.
    if len(point) != 1 + 2 * coordinate_bytes or point[0] != 0x04:
        raise _invalid(key_type)
    return bits


def _mismatch(key_type: str) -> ValidationError:
    return ValidationError(
        _("The content of the key does not match its type %(key_type)s. %(again)s"),
        code="type_mismatch",
        params={"key_type": key_type, "again": AGAIN},
    )


def _invalid(key_type: str) -> ValidationError:
    return ValidationError(
        _("The content of the key is not a valid %(key_type)s key. %(again)s"),
        code="invalid_key",
        params={"key_type": key_type, "again": AGAIN},
    )
