"""Seen on make run: an operator ended an order early marking its host failed; the host stayed
available and 38 s later an order placed through the API was given that same card. A host
ended for failure sells nothing until a host check passes, and the ended order's card is not
sold before its teardown is verified."""

import pytest

from payments.ledger.services.refunds import order_end_early_with_refund
from rental.exceptions import InsufficientStock
from rental.models import Host
from rental.services.orders import order_mark_paid

pytestmark = pytest.mark.django_db


def test_a_host_ended_for_failure_does_not_sell_its_card_again(
    catalogue, make_host, place_order, customer, make_customer, operator,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    h100 = catalogue["h100"]
    Host.objects.filter(gpu_model=h100).delete()
    make_host(h100, 2)
    order = place_order(customer, h100, lots=1)
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_paid(order_id=order.pk, actor=None, reason="Paid in the test")
        order_end_early_with_refund(
            order_id=order.pk, actor=operator, reason="GPU fell off the bus", host_failed=True
        )

    with pytest.raises(InsufficientStock):
        place_order(make_customer(), h100, lots=1)
