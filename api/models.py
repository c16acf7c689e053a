"""API tokens (stored hashed) and the idempotency keys of POST requests."""

from itertools import combinations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Scope(models.TextChoices):
    """What a token may do; a view declares the scope each HTTP method needs."""

    READ = "read", _("Read: catalogue, orders, payments, balance")
    ORDER = "order", _("Order: place and cancel orders, set the SSH key and billing details")
    PAY = "pay", _("Pay: pay orders, open and declare crypto payments, top up")
    # Money leaving the site: never implied by another scope, asked for on its own.
    WITHDRAW = "withdraw", _("Withdraw: send USD balance out to a wallet address")
    # Listing, creating and revoking tokens through the API. A token only ever creates tokens
    # within its own scopes and expiry (api.tokens.token_create), so this scope widens nothing.
    TOKENS = "tokens", _("Tokens: list, create and revoke API tokens (never beyond its own)")


SCOPE_ORDER = tuple(Scope.values)
SCOPE_SEPARATOR = ","
# Every non-empty subset, spelt in SCOPE_ORDER: the database accepts only these.
SCOPE_SETS = tuple(
    SCOPE_SEPARATOR.join(subset)
    for size in range(1, len(SCOPE_ORDER) + 1)
    for subset in combinations(SCOPE_ORDER, size)
)


def scopes_text(scopes) -> str:
    """The stored spelling of a set of scopes (ValueError for an unknown or empty set)."""
    chosen = set(scopes)
    unknown = chosen - set(SCOPE_ORDER)
    if unknown or not chosen:
        raise ValueError(f"scopes must be a non-empty subset of {SCOPE_ORDER}, not {scopes!r}")
    return SCOPE_SEPARATOR.join(scope for scope in SCOPE_ORDER if scope in chosen)


class ApiToken(models.Model):
    """A customer's token. Only its prefix and the SHA-256 of the whole token are kept: the
    token itself is shown once, when it is created (api.tokens.token_create)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(_("name"), max_length=100)
    prefix = models.CharField(_("prefix"), max_length=8, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    scopes = models.CharField(_("scopes"), max_length=32)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        ordering = ("-created_at", "-pk")
        constraints = [
            models.CheckConstraint(condition=Q(scopes__in=SCOPE_SETS), name="apitoken_scopes"),
            models.CheckConstraint(condition=~Q(name=""), name="apitoken_name_not_empty"),
            models.CheckConstraint(
                condition=Q(expires_at__isnull=True) | Q(expires_at__gt=models.F("created_at")),
                name="apitoken_expires_after_creation",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.display_prefix})"

    @property
    def display_prefix(self) -> str:
        """How the list shows the token: its public start only."""
        return f"gr_{self.prefix}_…"

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split(SCOPE_SEPARATOR))

    @property
    def scope_labels(self) -> list[str]:
        """The translated labels of the token's scopes, in SCOPE_ORDER (for the account page)."""
        return [Scope(scope).label for scope in SCOPE_ORDER if scope in self.scope_set]

    def is_live(self, now=None) -> bool:
        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()


class IdempotencyKey(models.Model):
    """One `Idempotency-Key` of one owner: the request it was first sent with and, once that
    request finished, its response, replayed for 24 hours (api.idempotency)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    key = models.CharField(max_length=255)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=2000)
    request_hash = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.BinaryField(null=True, blank=True)
    response_content_type = models.CharField(max_length=100, blank=True)
    response_headers = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    # When the request now running took the key (a claim left by a dead process is taken over
    # after API_IDEMPOTENCY_CLAIM_SECONDS).
    claimed_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("idempotency key")
        verbose_name_plural = _("idempotency keys")
        constraints = [
            models.UniqueConstraint(fields=("owner", "key"), name="idempotencykey_one_per_owner"),
            models.CheckConstraint(
                condition=Q(completed_at__isnull=True) | Q(response_status__isnull=False),
                name="idempotencykey_completed_has_response",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.method} {self.path} · {self.key}"
