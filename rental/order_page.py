"""The order page's content, rendered once per state of what it shows and kept in the worker.

The content (everything inside the layout) is a pure function of what it is rendered from:
the order's row and timeline, the hosts' access, what other apps show of the order (payments:
its payments with their state and money, the customer's balance: `state_parts`), whether the
customer has a saved SSH key, and the language. The cache key is all of that itself, read
fresh on every request, so a change anywhere is a new key on the very next request: the cache
cannot be stale, and no writer has a version to bump. The one per-request value in the content,
the CSRF token of its forms, is written as a placeholder and put in after.

Only the states whose content depends on nothing else are cached (an order that never ran: no
extensions, no pilot reports, no hosts); the rest render as before. Measured with
bench/plain_pages.py (the order page's CPU per request) and bench/http_pages.py.
"""

import secrets
from collections.abc import Callable

from django.core.signals import setting_changed
from django.template import Context
from django.template.loader import get_template
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from accounts.kept import Kept
from accounts.kept_layout import csrf_token_once

from .models import Order, OrderStatus

CONTENT_TEMPLATE = "rental/_order_content.html"
# An order in these statuses, never started, shows no extension, pilot report or host.
CACHED_STATUSES = frozenset(
    {OrderStatus.AWAITING_PAYMENT, OrderStatus.PAYMENT_REVIEW, OrderStatus.CANCELLED}
)
# Contents kept per worker process, the least recently used dropped first (~20 kB each).
CACHE_SIZE = 256
# Another app's part of the content's state: called with the order, returns a value whose repr
# changes whenever what that app shows of the order changes (payments registers its own in
# PaymentsConfig.ready; rental does not import it).
state_parts: list[Callable[[Order], object]] = []

_CSRF_PLACEHOLDER = f"csrf-{secrets.token_hex(16)}"
_contents = Kept(CACHE_SIZE)


def _render(request, context: dict) -> str:
    """The content for `context` (the view's), its CSRF tokens as the placeholder."""
    template = get_template(CONTENT_TEMPLATE).template
    return template.render(
        Context({**context, "request": request, "csrf_token": _CSRF_PLACEHOLDER})
    )


def _with_token(request, html: str) -> SafeString:
    # The content is the template's own output (escaped); the token is [A-Za-z0-9] only.
    return mark_safe(html.replace(_CSRF_PLACEHOLDER, csrf_token_once(request)))  # noqa: S308


def render_content(request, context: dict) -> SafeString:
    """The content block of the order page for `context`, with this request's CSRF token."""
    return _with_token(request, _render(request, context))


def content_key(request, order: Order, access: list) -> str | None:
    """The whole state the content shows, or None when it depends on more (not cached);
    `access`: the hosts' access the content shows."""
    if order.status not in CACHED_STATUSES or order.starts_at is not None or access:
        return None
    fields = tuple(getattr(order, field.attname) for field in Order._meta.concrete_fields)
    timeline = tuple(
        (change.pk, change.to_status, change.created_at) for change in order.status_changes.all()
    )
    parts = tuple(part(order) for part in state_parts)
    saved_key = bool(request.user.ssh_public_key)
    return repr((get_language(), bool(request.htmx), saved_key, fields, timeline, parts))


def cached_content(request, order: Order, access: list, context: Callable[[], dict]) -> SafeString:
    """render_content, from this worker's copy when the state it shows was rendered before;
    `context()` builds the view's context (the forms, the key's parsing), only to render."""
    key = content_key(request, order, access)
    if key is None:
        return render_content(request, context())
    html = _contents.get(key)
    if html is None:
        html = _contents.put(key, _render(request, context()))
    return _with_token(request, html)


# Settings the content reads (the networks a payment can use, say) changed: tests only.
setting_changed.connect(_contents.clear)
