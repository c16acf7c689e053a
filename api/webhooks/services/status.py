"""The one setter of a webhook delivery's status (the transitions map is beside
DeliveryStatus in api.webhooks.models). The caller holds the delivery's row lock and saves
the row; each attempt that leads to a change is already in the delivery log (WebhookAttempt).
"""

from ..models import DELIVERY_TRANSITIONS, WebhookDelivery


class InvalidDeliveryTransition(Exception):
    def __init__(self, from_status: str, to_status: str):
        super().__init__(f"a webhook delivery cannot go from {from_status} to {to_status}")
        self.from_status, self.to_status = from_status, to_status


def delivery_set_status(delivery: WebhookDelivery, *, to_status: str) -> None:
    """Check the transitions map and set the status on `delivery` (not saved)."""
    if to_status not in DELIVERY_TRANSITIONS.get(delivery.status, frozenset()):
        raise InvalidDeliveryTransition(delivery.status, to_status)
    delivery.status = to_status
