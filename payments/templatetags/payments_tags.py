"""Payment parts shown on pages of other apps (the order page, the account page).

Rental never imports payments; its templates load these tags instead.
"""

import secrets
from decimal import Decimal

from django import template
from django.conf import settings
from django.core.signals import setting_changed
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.safestring import mark_safe

from accounts.kept import Kept
from rental.models import OrderStatus
from rental.refunds import EARLY_END_STATUSES

from ..chain import selectors as chain
from ..chain.forms import StablecoinForm
from ..crypto.selectors.order_payments import order_payments_view_for_page
from ..ledger.forms import EndEarlyForm
from ..ledger.selectors.refunds import end_early_check
from ..ledger.selectors.refunds import order_refund as order_refund_view
from ..ledger.selectors.statement import customer_balance_account

register = template.Library()

# `kept`: a page's content rendered once per state it shows (the key the view reads fresh on
# every request), this many per worker process, the least recently used dropped first.
KEPT_SIZE = 256
_CSRF_PLACEHOLDER = f"csrf-{secrets.token_hex(16)}"
_kept = Kept(KEPT_SIZE)


class KeptNode(template.Node):
    def __init__(self, key, nodelist):
        self.key, self.nodelist = key, nodelist

    def render(self, context):
        key, token = self.key.resolve(context), context.get("csrf_token")
        if not key or not token or str(token) == "NOTPROVIDED":
            return self.nodelist.render(context)
        html = _kept.get(key)
        if html is None:
            # Rendered with a placeholder for the CSRF token: the copy serves every visitor.
            with context.push(csrf_token=_CSRF_PLACEHOLDER):
                html = _kept.put(key, self.nodelist.render(context))
        # The content is the template's own (escaped) output; the token is [A-Za-z0-9].
        return mark_safe(html.replace(_CSRF_PLACEHOLDER, str(token)))  # noqa: S308


@register.tag
def kept(parser, token):
    """{% kept key %}…{% endkept %}: the content rendered once per `key` (which must name
    everything it shows; no key: rendered every time), each response with its own CSRF
    token."""
    bits = token.split_contents()
    if len(bits) != 2:
        raise template.TemplateSyntaxError("{% kept key %} takes one argument")
    nodelist = parser.parse(("endkept",))
    parser.delete_first_token()
    return KeptNode(parser.compile_filter(bits[1]), nodelist)


# Settings a page shows (the networks, say) changed: tests only.
setting_changed.connect(_kept.clear)


@register.inclusion_tag("payments/_payment_options.html", takes_context=True)
def payment_options(context, order):
    """The payment step of an order awaiting payment: what is still due once something
    arrived; pay with the balance when it covers the whole total, else show the shortfall;
    or pay in a stablecoin of an enabled network (a bound form with its errors comes from the
    view as `crypto_form`). The order's payments are listed with what arrived on them."""
    awaiting = order.status == OrderStatus.AWAITING_PAYMENT
    view, crypto_form = None, None
    if awaiting:
        view = order_payments_view_for_page(order)
        crypto_form = context.get("crypto_form") or StablecoinForm(
            choices=chain.stablecoin_choices()
        )
    return {
        "request": context.get("request"),
        "csrf_token": context.get("csrf_token"),
        "order": order,
        "awaiting": awaiting,
        "view": view,
        "crypto_form": crypto_form,
    }


@register.inclusion_tag("payments/_order_payments.html")
def order_payments(order):
    """The order's stablecoin payments with their state and what arrived on them (an order
    under review, say); for a cancelled order, what happened to the money."""
    return {"view": order_payments_view_for_page(order)}


# An order in these statuses was paid: its payment has a receipt.
RECEIPTED_ORDER_STATUSES = (
    OrderStatus.PAID,
    OrderStatus.PROVISIONING,
    OrderStatus.ACTIVE,
    OrderStatus.ENDED,
)


@register.inclusion_tag("payments/receipt_order_links.html")
def order_receipt_links(order):
    """Links to a paid order's receipt and to all its receipts (extensions, refund): no query,
    the receipt is found when the link is followed."""
    return {"order": order, "paid": order.status in RECEIPTED_ORDER_STATUSES}


@register.inclusion_tag("payments/_extension_receipt_link.html")
def extension_receipt_link(extension):
    """A link to a paid extension's receipt (on the order page): no query, the receipt is
    found when the link is followed."""
    return {"extension": extension}


@register.inclusion_tag("payments/_balance_summary.html")
def balance_summary(user):
    account = customer_balance_account(customer=user)
    return {"balance": account.balance if account else Decimal("0.00")}


@register.inclusion_tag("ops/_end_early.html", takes_context=True)
def ops_end_early(context, order):
    """The operators' "End early and refund" section of an order page: once ended early, when,
    the hours refunded and the reason; before, which case applies (or why none does), the
    refund if ended now and the form. Nothing for an order that can never be ended early."""
    refund = order_refund_view(order=order)
    check = None
    if refund is None and order.status in EARLY_END_STATUSES:
        check = end_early_check(order, timezone.now())
    return {
        "csrf_token": context.get("csrf_token"),
        "order": order,
        "summary": refund,
        "check": check,
        "form": EndEarlyForm(check=check) if check else None,
        "waiting_hours": settings.EARLY_END_WAITING_HOURS,
    }


@register.inclusion_tag("payments/_order_refund.html")
def order_refund_notice(order):
    """On the customer's order page: the order was ended early, N hours refunded (X USD)."""
    return {"order": order, "refund": order_refund_view(order=order)}


@register.simple_tag
def order_refund(order):
    """{% order_refund order as refund %}: the refund of an order ended early (its hours,
    amount, reason) and the customer's balance now, for emails; None for any other order."""
    refund = order_refund_view(order=order)
    if refund is None:
        return None
    account = customer_balance_account(customer=order.customer)
    return {"refund": refund, "balance": account.balance if account else Decimal("0.00")}


@register.filter
def token_amount(units, decimals) -> str:
    """Base units as the token's decimal amount in machine form, for wallets and copy buttons
    (never localised): {{ payment.received_units|token_amount:6 }} → "100.000000"."""
    if units is None or decimals in (None, ""):
        return ""
    return chain.token_amount(units, int(decimals))


@register.filter
def token_display(units, decimals) -> str:
    """Base units as the token's amount in the reader's language, all decimals shown and
    thousands grouped: "1,234.500000" in English, "1.234,500000" in Italian."""
    if units is None or decimals in (None, ""):
        return ""
    decimals = int(decimals)
    amount = Decimal(int(units)).scaleb(-decimals)
    return number_format(amount, decimal_pos=decimals, use_l10n=True, force_grouping=True)


@register.filter
def network_name(key: str) -> str:
    return chain.network_name(key)


@register.simple_tag(takes_context=True)
def withdrawals_pending(context):
    """The customer's withdrawals in progress, for the balance page: the ledger's statement
    view shows them without importing the withdrawals room above it."""
    # Imported here, by the statement page, the only one to show them: the withdrawals'
    # selectors bring their services, which every page that loads these tags held (issue 24).
    from ..withdrawals.selectors import customer_withdrawals_pending

    return customer_withdrawals_pending(customer=context["request"].user)
