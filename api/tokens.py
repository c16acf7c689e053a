"""Token services: create (the raw token is returned once), revoke, and the lookup that
authenticates a request. Only the owner acts on a token."""

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User

from .locks import lock_token
from .models import SCOPE_ORDER, ApiToken, scopes_text

TOKEN_PREFIX = "gr"
# gr_<8 lowercase hex>_<43 URL-safe characters>
TOKEN_PATTERN = re.compile(r"gr_([0-9a-f]{8})_([A-Za-z0-9_-]{43})")
# last_used_at is written at most this often per token, not on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode("ascii")).hexdigest()


@dataclass(frozen=True, slots=True)
class CreatedToken:
    token: ApiToken
    raw: str  # shown to the customer once, never stored


class TokenEscalation(Exception):
    """A token asked for a token beyond itself: a scope it lacks, or a later (or no) expiry
    where it expires. `message` says which, for the customer."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


def _check_within(granting: ApiToken, scopes: set[str], expires_at: datetime | None) -> None:
    missing = [scope for scope in SCOPE_ORDER if scope in scopes - granting.scope_set]
    if missing:
        raise TokenEscalation(
            _("This token cannot create a token with scopes it does not have itself: %(scopes)s.")
            % {"scopes": ", ".join(missing)}
        )
    if granting.expires_at is not None and (expires_at is None or expires_at > granting.expires_at):
        raise TokenEscalation(
            _(
                "This token expires on %(expiry)s (UTC): a token it creates must expire by then "
                "too. Choose an expiry day no later than %(day)s."
            )
            % {
                "expiry": granting.expires_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
                # A day's token stops at the end of it (api.forms): the day before this one's.
                "day": (granting.expires_at.astimezone(UTC).date() - timedelta(days=1)).isoformat(),
            }
        )


def token_create(
    *,
    owner: User,
    name: str,
    scopes,
    expires_at: datetime | None = None,
    granted_by: ApiToken | None = None,
) -> CreatedToken:
    """A new token for `owner`. Raises ValueError for an empty name, unknown or no scopes,
    or an expiry that is not in the future (the form says so to the customer first).

    `granted_by` is the token a script creates it with (the API; the account page passes
    none): the new token may have only scopes it has and may not outlive it, else
    TokenEscalation and nothing is created. It is locked while the new token is written, so a
    token revoked meanwhile creates nothing (TokenRefused)."""
    name = name.strip()
    if not name:
        raise ValueError("a token needs a name")
    stored_scopes = scopes_text(scopes)
    now = timezone.now()
    if expires_at is not None and expires_at <= now:
        raise ValueError("a token's expiry must be in the future")
    for _attempt in range(5):  # a prefix already taken (1 in 4 billion) draws another
        prefix = secrets.token_hex(4)
        raw = f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
        try:
            with transaction.atomic():
                if granted_by is not None:
                    granting = lock_token(token_id=granted_by.pk, owner=owner)
                    if not granting.is_live(now):
                        raise TokenRefused(
                            TokenRefused.EXPIRED
                            if granting.revoked_at is None
                            and granting.expires_at is not None
                            and granting.expires_at <= now
                            else TokenRefused.REVOKED
                        )
                    _check_within(granting, set(scopes), expires_at)
                token = ApiToken.objects.create(
                    owner=owner,
                    name=name,
                    prefix=prefix,
                    token_hash=token_hash(raw),
                    scopes=stored_scopes,
                    created_at=now,
                    expires_at=expires_at,
                )
        except IntegrityError:
            continue
        return CreatedToken(token=token, raw=raw)
    raise RuntimeError("could not draw a free token prefix")


def token_revoke(*, owner: User, token_id: int) -> ApiToken:
    """Revoke one of the owner's tokens (again: nothing changes). Another owner's token
    raises ApiToken.DoesNotExist."""
    with transaction.atomic():
        token = lock_token(token_id=token_id, owner=owner)
        if token.revoked_at is None:
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
    return token


def owner_tokens(*, owner: User):
    return ApiToken.objects.filter(owner=owner).order_by("-created_at", "-pk")


class TokenRefused(Exception):
    """Why a presented token does not authenticate: `reason` is one of the constants below."""

    MALFORMED = "malformed"
    UNKNOWN = "unknown"
    REVOKED = "revoked"
    EXPIRED = "expired"

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


def token_authenticate(raw: str, *, now=None) -> ApiToken:
    """The live token `raw` spells, with its owner loaded; raises TokenRefused. Records the
    use (at most one write a minute per token)."""
    match = TOKEN_PATTERN.fullmatch(raw)
    if match is None:
        raise TokenRefused(TokenRefused.MALFORMED)
    prefix = match.group(1)
    token = ApiToken.objects.select_related("owner").filter(prefix=prefix).first()
    if token is None or not hmac.compare_digest(token.token_hash, token_hash(raw)):
        raise TokenRefused(TokenRefused.UNKNOWN)
    now = now or timezone.now()
    if token.revoked_at is not None:
        raise TokenRefused(TokenRefused.REVOKED)
    if token.expires_at is not None and token.expires_at <= now:
        raise TokenRefused(TokenRefused.EXPIRED)
    if not token.owner.is_active:
        raise TokenRefused(TokenRefused.REVOKED)
    _record_use(token, now)
    return token


def _record_use(token: ApiToken, now) -> None:
    stale = now - LAST_USED_RESOLUTION
    if token.last_used_at is not None and token.last_used_at > stale:
        return
    # Conditional: parallel requests of one token write it once.
    ApiToken.objects.filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lte=stale), pk=token.pk
    ).update(last_used_at=now)
    token.last_used_at = now
