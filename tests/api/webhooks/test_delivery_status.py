"""Every pair of the delivery's transitions map: allowed ones set the status, the others raise
and leave it as it was (the shape of rental's and payments' setters)."""

import itertools

import pytest

from api.webhooks.models import DELIVERY_TRANSITIONS, DeliveryStatus, WebhookDelivery
from api.webhooks.services.status import InvalidDeliveryTransition, delivery_set_status


@pytest.mark.parametrize(
    ("from_status", "to_status"), list(itertools.product(DeliveryStatus.values, repeat=2))
)
def test_each_pair_of_statuses(from_status, to_status):
    delivery = WebhookDelivery(status=from_status)
    if to_status in DELIVERY_TRANSITIONS[from_status]:
        delivery_set_status(delivery, to_status=to_status)
        assert delivery.status == to_status
    else:
        with pytest.raises(InvalidDeliveryTransition):
            delivery_set_status(delivery, to_status=to_status)
        assert delivery.status == from_status


def test_a_finished_delivery_only_reopens():
    assert DELIVERY_TRANSITIONS[DeliveryStatus.DELIVERED] == {DeliveryStatus.PENDING}
    assert DELIVERY_TRANSITIONS[DeliveryStatus.GAVE_UP] == {DeliveryStatus.PENDING}
    assert set(DELIVERY_TRANSITIONS) == set(DeliveryStatus.values)
