"""Every pair of the delivery's transitions map: allowed ones pass the check, the others raise
and leave it as it was (the shape of rental's and payments' setters); the setter saves the
status with the columns that go with it, under the delivery's lock."""

import itertools

import pytest
from django.db import transaction
from django.utils import timezone

from api.webhooks.locks import lock_delivery
from api.webhooks.models import DELIVERY_TRANSITIONS, DeliveryStatus, WebhookDelivery
from api.webhooks.services.status import (
    DELIVERY_STATES,
    InvalidDeliveryTransition,
    delivery_set_status,
)
from outbox import events


@pytest.mark.parametrize(
    ("from_status", "to_status"), list(itertools.product(DeliveryStatus.values, repeat=2))
)
def test_each_pair_of_statuses(from_status, to_status):
    delivery = WebhookDelivery(status=from_status)
    if to_status in DELIVERY_TRANSITIONS[from_status]:
        DELIVERY_STATES.check(delivery, to_status)
    else:
        with pytest.raises(InvalidDeliveryTransition):
            DELIVERY_STATES.check(delivery, to_status)
    assert delivery.status == from_status


def test_a_finished_delivery_only_reopens():
    assert DELIVERY_TRANSITIONS[DeliveryStatus.DELIVERED] == {DeliveryStatus.PENDING}
    assert DELIVERY_TRANSITIONS[DeliveryStatus.GAVE_UP] == {DeliveryStatus.PENDING}
    assert set(DELIVERY_TRANSITIONS) == set(DeliveryStatus.values)


@pytest.mark.django_db
def test_the_setter_saves_the_status_with_its_columns_and_refuses_without_writing(
    customer, receiver, endpoint_for, credit, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    with django_capture_on_commit_callbacks(execute=True):
        credit(customer, "25.00")  # fanned out and delivered, as the worker does
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert delivery.status == DeliveryStatus.DELIVERED

    with pytest.raises(InvalidDeliveryTransition), transaction.atomic():
        locked = lock_delivery(delivery_id=delivery.pk)
        delivery_set_status(locked, to_status=DeliveryStatus.FAILED)
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.DELIVERED

    due = timezone.now()
    with transaction.atomic():
        locked = lock_delivery(delivery_id=delivery.pk)
        delivery_set_status(
            locked,
            to_status=DeliveryStatus.PENDING,
            fields={"round_attempts": 0, "next_attempt_at": due},
        )
    stored = WebhookDelivery.objects.get(pk=delivery.pk)
    assert (stored.status, stored.round_attempts, stored.next_attempt_at) == ("pending", 0, due)
