"""The order page's extensions section (rental.selectors_extensions)."""

from django import template

from ..models import OrderStatus
from ..selectors_extensions import order_extendable, order_extensions

register = template.Library()


@register.inclusion_tag("rental/extend_section.html")
def order_extensions_section(order):
    """For an active order (or one that was extended): the current end, the way to extend it
    and its extensions with their status. One query, none for other orders."""
    shown = order.status == OrderStatus.ACTIVE or order.period > 0
    return {
        "order": order,
        "shown": shown,
        "extendable": order_extendable(order) if shown else False,
        "extensions": order_extensions(order) if shown else [],
    }
