"""The order-scoped upload token a diagnostics kit carries.

The token is shown once, inside the kit; only its SHA-256 is stored. One live token per order
(a partial unique index): downloading a new kit replaces it and the old one stops working. It
works only while the order accepts reports (`reports_open`).
"""

import hashlib
import secrets
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from rental.models import Order

from ..exceptions import TokenExpired, TokenOfAnotherOrder, TokenReplaced, TokenUnknown
from ..locks import lock_order_pilot
from ..models import KIT_STATUSES, KitToken

TOKEN_PREFIX = "grk_"
TOKEN_MAX_LENGTH = 200


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def reports_open(order: Order, now: datetime | None = None) -> bool:
    """Reports are accepted (and kits given) once the order is paid, until the rental ends."""
    if order.status not in KIT_STATUSES:
        return False
    return order.ends_at is None or (now or timezone.now()) < order.ends_at


def kit_token_issue(*, order: Order) -> str:
    """A fresh token for the order's new kit, replacing the live one; returns the token itself
    (never stored). The caller checked that the order is the customer's and accepts reports."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        lock_order_pilot(order_id=order.pk)
        now = timezone.now()
        KitToken.objects.filter(order_id=order.pk, replaced_at__isnull=True).update(replaced_at=now)
        KitToken.objects.create(order_id=order.pk, token_hash=token_hash(token))
    return token


def kit_token_check(*, order_id: int, token: str, now: datetime | None = None) -> KitToken:
    """The live token of this order, with its order and customer; otherwise the refusal that
    says why: unknown, of another order, replaced by a newer kit, or expired with the rental.

    Called once before reading the report (to refuse early) and again under the order's pilot
    mutex, where its answer holds until the report is stored.
    """
    if not token or len(token) > TOKEN_MAX_LENGTH:
        raise TokenUnknown()
    found = (
        KitToken.objects.select_related("order__customer")
        .filter(token_hash=token_hash(token))
        .first()
    )
    if found is None:
        raise TokenUnknown()
    language = found.order.customer.language
    if found.order_id != order_id:
        raise TokenOfAnotherOrder(language=language)
    if found.replaced_at is not None:
        raise TokenReplaced(language=language)
    if not reports_open(found.order, now):
        raise TokenExpired(language=language)
    return found
