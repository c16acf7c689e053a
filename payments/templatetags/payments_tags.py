"""Payment parts shown on pages of other apps (the order page, the account page).

Rental never imports payments; its templates load these tags instead.
"""

from decimal import Decimal

from django import template

from rental.models import OrderStatus

from ..forms_crypto import StablecoinForm
from ..selectors import crypto
from ..selectors.statement import customer_balance_account

register = template.Library()


@register.inclusion_tag("payments/_payment_options.html", takes_context=True)
def payment_options(context, order):
    """The payment step of an order awaiting payment: pay with the balance when it covers
    the whole total, else show the shortfall; or pay in a stablecoin of an enabled network
    (a bound form with its errors comes from the view as `crypto_form`)."""
    awaiting = order.status == OrderStatus.AWAITING_PAYMENT
    balance, live_payment, crypto_form = Decimal("0.00"), None, None
    if awaiting:
        step = crypto.order_payment_step(order=order)
        balance, live_payment = step.balance, step.live_payment
        crypto_form = context.get("crypto_form") or StablecoinForm(choices=step.choices)
    return {
        "request": context.get("request"),
        "csrf_token": context.get("csrf_token"),
        "order": order,
        "awaiting": awaiting,
        "balance": balance,
        "covers": balance >= order.total_usd,
        "shortfall": max(order.total_usd - balance, Decimal("0.00")),
        "live_payment": live_payment,
        "crypto_form": crypto_form,
    }


@register.inclusion_tag("payments/_balance_summary.html")
def balance_summary(user):
    account = customer_balance_account(customer=user)
    return {"balance": account.balance if account else Decimal("0.00")}


@register.filter
def token_amount(units, decimals) -> str:
    """Base units as the token's decimal amount: {{ payment.received_units|token_amount:6 }}."""
    if units is None or decimals in (None, ""):
        return ""
    return crypto.token_amount(units, int(decimals))


@register.filter
def network_name(key: str) -> str:
    return crypto.network_name(key)


@register.inclusion_tag("payments/_order_payments.html")
def order_payments(order):
    """Links to the order's stablecoin payments (for an order under review, say)."""
    from ..models import CryptoPayment

    return {"payments": list(CryptoPayment.objects.filter(order=order).order_by("-created_at"))}
