"""The event types of the outbox: what webhooks endpoints subscribe to.

Strings, so every app can name them without importing the others (outbox imports nothing of
ours, and anyone may import outbox).
"""

from django.utils.translation import gettext_lazy as _

ORDER_PAID = "order.paid"
ORDER_ACTIVE = "order.active"
ORDER_ENDING = "order.ending"
ORDER_ENDED = "order.ended"
ORDER_EXTENDED = "order.extended"
PAYMENT_DETECTED = "payment.detected"
PAYMENT_CONFIRMED = "payment.confirmed"
PAYMENT_REVIEW = "payment.review"
BALANCE_CREDITED = "balance.credited"

# type → what the endpoint form says about it
EVENT_TYPES: dict[str, object] = {
    ORDER_PAID: _("An order is paid"),
    ORDER_ACTIVE: _("An order's machines are ready (with the access details)"),
    ORDER_ENDING: _("A rental ends in 72, 24 or 1 hours"),
    ORDER_ENDED: _("A rental has ended"),
    ORDER_EXTENDED: _("A rental is extended: its extension is paid and its end moved"),
    PAYMENT_DETECTED: _("A crypto transfer is seen, waiting for confirmations"),
    PAYMENT_CONFIRMED: _("A crypto payment is confirmed"),
    PAYMENT_REVIEW: _("A crypto payment is sent to review"),
    BALANCE_CREDITED: _("Money is credited to the USD balance"),
}
