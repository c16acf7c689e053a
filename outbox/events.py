"""The event types of the outbox: what webhook endpoints subscribe to, and what the events
list (`GET /api/v1/events/`) shows.

Strings, so every app can name them without importing the others (outbox imports nothing of
ours, and anyone may import outbox). Each is written by the one status setter of its entity,
in the transaction of the change (README, "Webhooks", lists each with its data).
"""

from django.utils.translation import gettext_lazy as _

ORDER_PAID = "order.paid"
ORDER_ACTIVE = "order.active"
ORDER_ENDING = "order.ending"
ORDER_ENDED = "order.ended"
ORDER_EXTENDED = "order.extended"
ORDER_CANCELLED = "order.cancelled"
ORDER_EXPIRED = "order.expired"
PAYMENT_DETECTED = "payment.detected"
PAYMENT_CONFIRMED = "payment.confirmed"
PAYMENT_REVIEW = "payment.review"
PAYMENT_EXPIRED = "payment.expired"
PAYMENT_CLOSED = "payment.closed"
PAYMENT_RESOLVED = "payment.resolved"
PAYMENT_INVALID = "payment.invalid"
BALANCE_CREDITED = "balance.credited"
WITHDRAWAL_REQUESTED = "withdrawal.requested"
WITHDRAWAL_APPROVED = "withdrawal.approved"
WITHDRAWAL_SENT = "withdrawal.sent"
WITHDRAWAL_PAID = "withdrawal.paid"
WITHDRAWAL_REJECTED = "withdrawal.rejected"
ACCESS_READY = "access.ready"
ACCESS_REVOKED = "access.revoked"
WEBHOOK_PING = "webhook.ping"

# type → what the endpoint form says about it
EVENT_TYPES: dict[str, object] = {
    ORDER_PAID: _("An order is paid"),
    ORDER_ACTIVE: _("An order's machines are ready (with the access details)"),
    ORDER_ENDING: _("A rental ends in 72, 24 or 1 hours"),
    ORDER_ENDED: _("A rental has ended"),
    ORDER_EXTENDED: _("A rental is extended: its extension is paid and its end moved"),
    ORDER_CANCELLED: _("An order is cancelled (by you, or by an operator after a review)"),
    ORDER_EXPIRED: _("An unpaid order is released: its time to pay ran out"),
    PAYMENT_DETECTED: _("A crypto transfer is seen, waiting for confirmations"),
    PAYMENT_CONFIRMED: _("A crypto payment is confirmed"),
    PAYMENT_REVIEW: _("A crypto payment is sent to review"),
    PAYMENT_EXPIRED: _("A crypto payment expired with nothing received"),
    PAYMENT_CLOSED: _("A crypto payment is closed: its order was paid another way or cancelled"),
    PAYMENT_RESOLVED: _("A crypto payment under review is resolved"),
    PAYMENT_INVALID: _("A crypto payment under review is found invalid"),
    BALANCE_CREDITED: _("Money is credited to the USD balance"),
    WITHDRAWAL_REQUESTED: _("A withdrawal is requested"),
    WITHDRAWAL_APPROVED: _("A withdrawal is approved, waiting for the transfer"),
    WITHDRAWAL_SENT: _("A withdrawal's transfer is sent, being checked on chain"),
    WITHDRAWAL_PAID: _("A withdrawal is paid (its transfer confirmed on chain)"),
    WITHDRAWAL_REJECTED: _("A withdrawal is rejected; its amount is back in the balance"),
    ACCESS_READY: _("Access to a host is ready (verified by logging in as you)"),
    ACCESS_REVOKED: _("Access to a host is revoked and your files erased (verified)"),
    WEBHOOK_PING: _("A test event, sent only to the endpoint you pinged"),
}

# What an endpoint can subscribe to: every type but the ping, which goes to the one endpoint
# pinged whatever it subscribes to.
SUBSCRIBABLE_EVENT_TYPES: dict[str, object] = {
    name: label for name, label in EVENT_TYPES.items() if name != WEBHOOK_PING
}
