"""Every write of the rental domain. Orders live in `orders`; the way from paid to active in
`provisioning`; reminders and the hard stop in `lifecycle`; customer emails in `emails`."""

from .orders import (
    Configuration,
    Summary,
    configuration_summary,
    order_cancel_by_customer,
    order_create,
    order_mark_paid,
    order_set_status,
)

__all__ = [
    "Configuration",
    "Summary",
    "configuration_summary",
    "order_cancel_by_customer",
    "order_create",
    "order_mark_paid",
    "order_set_status",
]
