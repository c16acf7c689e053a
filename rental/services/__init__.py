"""Every write of the rental domain. Orders live in `orders`; the way from paid to active in
`provisioning`; reminders and the hard stop in `lifecycle`; customer emails in `emails`; more
days on an active rental in `extensions`."""

from .early_end import EarlyEndRefused, order_end_early
from .extensions import (
    extension_cancel,
    extension_create,
    extension_hold_for_payment,
    extension_pay,
    extension_release_unpaid,
    extensions_cancel_for_order,
    extensions_release_expired_holds,
)
from .intents import (
    order_back_to_awaiting,
    order_cancel_in_review,
    order_hold_for_payment,
    order_pay,
    order_release_unpaid,
    order_send_to_review,
)
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
    "EarlyEndRefused",
    "order_end_early",
    "extension_cancel",
    "extension_create",
    "extension_hold_for_payment",
    "extension_release_unpaid",
    "extensions_release_expired_holds",
    "extension_pay",
    "extensions_cancel_for_order",
    "order_back_to_awaiting",
    "order_cancel_by_customer",
    "order_cancel_in_review",
    "order_hold_for_payment",
    "order_pay",
    "order_release_unpaid",
    "order_send_to_review",
    "order_create",
    "order_mark_paid",
    "order_set_status",
]
