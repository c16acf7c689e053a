"""The one setter of a webhook delivery's status (the transitions map is beside
DeliveryStatus in api.webhooks.models). The caller holds the delivery's row lock
(api.webhooks.locks); the setter saves the status together with the other columns the change
sets, in one UPDATE.

No audit row and no log line of its own: each attempt that leads to a change is already in the
delivery log (WebhookAttempt) and logged by the attempt (services.delivery), and a redelivery
is the owner's visible action on the delivery's page.
"""

from collections.abc import Mapping
from typing import Any

from statemachine import StateMachine

from ..models import DELIVERY_TRANSITIONS, WebhookDelivery


class InvalidDeliveryTransition(Exception):
    def __init__(self, from_status: str, to_status: str):
        super().__init__(f"a webhook delivery cannot go from {from_status} to {to_status}")
        self.from_status, self.to_status = from_status, to_status


DELIVERY_STATES = StateMachine(
    name="webhook_delivery",
    transitions=DELIVERY_TRANSITIONS,
    audit_model=None,  # the attempt log (above)
    refuse=lambda delivery, to: InvalidDeliveryTransition(delivery.status, to),
    touch=(),  # no updated_at: the attempts carry the times
)


def delivery_set_status(
    delivery: WebhookDelivery, *, to_status: str, fields: Mapping[str, Any] = {}
) -> WebhookDelivery:
    """Check the transitions map (InvalidDeliveryTransition, nothing changed), then set and
    save the status with `fields` on the locked `delivery`."""
    DELIVERY_STATES.change(delivery, to_status=to_status, actor=None, reason="", fields=fields)
    return delivery
