"""Payment parts shown on pages of other apps (the order page, the account page).

Rental never imports payments; its templates load these tags instead.
"""

from decimal import Decimal

from django import template
from django.utils.formats import number_format

from rental.models import OrderStatus

from ..forms_crypto import StablecoinForm
from ..selectors import crypto
from ..selectors.order_payments import order_payments_view
from ..selectors.statement import customer_balance_account

register = template.Library()


@register.inclusion_tag("payments/_payment_options.html", takes_context=True)
def payment_options(context, order):
    """The payment step of an order awaiting payment: what is still due once something
    arrived; pay with the balance when it covers the whole total, else show the shortfall;
    or pay in a stablecoin of an enabled network (a bound form with its errors comes from the
    view as `crypto_form`). The order's payments are listed with what arrived on them."""
    awaiting = order.status == OrderStatus.AWAITING_PAYMENT
    view, crypto_form = None, None
    if awaiting:
        view = order_payments_view(order=order)
        crypto_form = context.get("crypto_form") or StablecoinForm(
            choices=crypto.stablecoin_choices()
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
    return {"view": order_payments_view(order=order)}


@register.inclusion_tag("payments/_balance_summary.html")
def balance_summary(user):
    account = customer_balance_account(customer=user)
    return {"balance": account.balance if account else Decimal("0.00")}


@register.filter
def token_amount(units, decimals) -> str:
    """Base units as the token's decimal amount in machine form, for wallets and copy buttons
    (never localised): {{ payment.received_units|token_amount:6 }} → "100.000000"."""
    if units is None or decimals in (None, ""):
        return ""
    return crypto.token_amount(units, int(decimals))


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
    return crypto.network_name(key)
