"""Payment parts shown on pages of other apps (the order page, the account page).

Rental never imports payments; its templates load these tags instead.
"""

from decimal import Decimal

from django import template

from rental.models import OrderStatus

from ..selectors.statement import customer_balance_account

register = template.Library()


@register.inclusion_tag("payments/_payment_options.html", takes_context=True)
def payment_options(context, order):
    """The payment step of an order awaiting payment: pay with the balance when it covers
    the whole total, else show the shortfall."""
    awaiting = order.status == OrderStatus.AWAITING_PAYMENT
    balance = Decimal("0.00")
    if awaiting:
        account = customer_balance_account(customer=order.customer_id)
        balance = account.balance if account else Decimal("0.00")
    return {
        "request": context.get("request"),
        "csrf_token": context.get("csrf_token"),
        "order": order,
        "awaiting": awaiting,
        "balance": balance,
        "covers": balance >= order.total_usd,
        "shortfall": max(order.total_usd - balance, Decimal("0.00")),
    }


@register.inclusion_tag("payments/_balance_summary.html")
def balance_summary(user):
    account = customer_balance_account(customer=user)
    return {"balance": account.balance if account else Decimal("0.00")}
