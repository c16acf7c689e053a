"""Seen in the fault run (scripts/fault_run.py): a customer's "Confirm order" answered 500,
"deadlock detected". The payments' worker, settling that customer's payment, held the GPU model's
lock and had written rows that refer to the customer (Django's foreign keys are checked at
COMMIT, with a KEY SHARE lock on the referenced row); the order's transaction held the customer's
row FOR UPDATE and waited for the GPU model. FOR UPDATE conflicts with KEY SHARE: each waited
for the other. The house's locks are FOR NO KEY UPDATE, which lets foreign-key checks through.

Here, on two connections: A locks the GPU model and writes a row referring to the customer; B
places that customer's order and is seen waiting for the GPU model; then A commits.
"""

import threading
import time

import pytest
from allauth.account.models import EmailAddress
from django.db import connection, transaction

from rental import locks
from rental.models import Order, OrderStatus
from rental.services import Configuration, order_create

WAIT_SECONDS = 30


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _waiting_for_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return bool(row) and row[0] == "Lock"


@pytest.mark.django_db(transaction=True)
def test_an_order_and_a_transaction_holding_its_gpu_model_never_deadlock(customer, catalogue):
    h100 = catalogue["h100"]
    configuration = Configuration(gpu_model=h100, duration_days=3, lots=1, preparation="ubuntu")
    b_pid: list[int] = []
    b_result: list[object] = []
    b_started = threading.Event()

    def place_order():
        try:
            b_pid.append(_backend_pid())
            b_started.set()
            b_result.append(order_create(customer=customer, configuration=configuration))
        except Exception as exc:  # noqa: BLE001 - inspected below
            b_result.append(exc)
        finally:
            connection.close()

    a_error = None
    order_thread = threading.Thread(target=place_order)
    try:
        with transaction.atomic():
            locks.lock_gpu_model(h100.pk)
            EmailAddress.objects.create(user=customer, email="second@example.com")
            order_thread.start()
            assert b_started.wait(WAIT_SECONDS)
            deadline = time.monotonic() + WAIT_SECONDS
            while not _waiting_for_a_lock(b_pid[0]):  # the race: B queued behind A
                assert time.monotonic() < deadline, "the order never waited for the GPU model"
                time.sleep(0.02)
    except Exception as exc:  # noqa: BLE001 - A's COMMIT is where the deadlock was
        a_error = exc
    order_thread.join(WAIT_SECONDS)

    assert a_error is None, a_error
    assert len(b_result) == 1 and isinstance(b_result[0], Order), b_result
    assert b_result[0].status == OrderStatus.AWAITING_PAYMENT
    assert EmailAddress.objects.filter(user=customer, email="second@example.com").exists()
