"""Operators editing hosts while payments allocate cards, on separate PostgreSQL connections."""

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction

from rental.exceptions import HostCardsInUse
from rental.models import CardAllocation, Host
from rental.services import order_mark_paid
from rental.services.provisioning import host_save
from tests.concurrency import run_concurrently

pytestmark = pytest.mark.django_db(transaction=True)


def test_cards_cannot_be_removed_while_a_payment_allocates_them(catalogue, customer, place_order):
    h100 = catalogue["h100"]
    Host.objects.filter(gpu_model=h100).delete()
    host = Host.objects.create(
        management="manual", name="solo", gpu_model=h100, cards=8, ssh_host="h", ssh_user="u"
    )
    order = place_order(customer, h100, lots=6)
    allocated = threading.Event()
    outcome = {}

    def operator_cuts_to_two_cards():
        allocated.wait(timeout=30)
        try:
            edited = Host.objects.get(pk=host.pk)
            edited.cards = 2
            outcome["edit"] = host_save(host=edited)
        except Exception as exc:  # noqa: BLE001 - the outcome is what the test inspects
            outcome["edit"] = exc
        finally:
            connection.close()

    operator = threading.Thread(target=operator_cuts_to_two_cards)
    operator.start()
    with transaction.atomic():  # the payment: cards 0-5 chosen, not committed yet
        order_mark_paid(order_id=order.pk, actor=None, reason="test payment")
        allocated.set()
        operator.join(timeout=0.5)  # the edit waits on the model lock (or has not started)
    operator.join(timeout=30)

    assert isinstance(outcome["edit"], HostCardsInUse), outcome
    host.refresh_from_db()
    assert host.cards == 8
    live = CardAllocation.objects.filter(host=host, released_at__isnull=True)
    assert sorted(live.values_list("card_index", flat=True)) == [0, 1, 2, 3, 4, 5]


def test_two_operators_adding_the_same_host_name_get_one_host_and_a_field_error(catalogue):
    h100 = catalogue["h100"]

    def add(_index):
        return host_save(
            host=Host(name="twin", gpu_model=h100, cards=4, ssh_host="h", ssh_user="ubuntu")
        )

    results = run_concurrently(add, 6, workers=6)

    assert Host.objects.filter(name="twin").count() == 1
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 5
    assert all(isinstance(error, ValidationError) for error in errors), errors
    assert all("name" in error.message_dict for error in errors)
