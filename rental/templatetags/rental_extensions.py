"""The order page's extensions section (rental.selectors_extensions)."""

from dataclasses import dataclass

from django import template

from ..models import ExtensionStatus, Order, OrderExtension, OrderStatus
from ..selectors_extensions import order_extendable, order_extensions

register = template.Library()


@dataclass(frozen=True, slots=True)
class ExtensionRow:
    """What the section shows of one extension (the template compares no statuses)."""

    extension: OrderExtension
    order: Order

    @property
    def is_paid(self) -> bool:
        return self.extension.status == ExtensionStatus.PAID

    @property
    def awaits_payment(self) -> bool:
        return self.extension.status == ExtensionStatus.AWAITING_PAYMENT

    @property
    def ended_early(self) -> bool:
        """Paid, and the order was ended early before this period's end: the hours it did not
        deliver were refunded with the order."""
        ended, until = self.order.ended_early_at, self.extension.period_ends_at
        return self.is_paid and ended is not None and until is not None and ended < until


@register.inclusion_tag("rental/extend_section.html")
def order_extensions_section(order):
    """For an active order (or one that was extended): the current end, the way to extend it
    and its extensions with their status. One query, none for other orders."""
    shown = order.status == OrderStatus.ACTIVE or order.period > 0
    return {
        "order": order,
        "shown": shown,
        "extendable": order_extendable(order) if shown else False,
        "extensions": [ExtensionRow(e, order) for e in order_extensions(order)] if shown else [],
    }
