"""Each host's access to an order and where it stands, for templates that are not given it
(the "ended" email): {% order_host_access order as hosts %} (rental.selectors.order_access)."""

from django import template

from ..selectors import HostAccess, order_access

register = template.Library()


@register.simple_tag
def order_host_access(order) -> list[HostAccess]:
    return order_access(order)
