"""Every row lock of the rental app, in one place.

The lock order of the whole house, written once (each app's lock module says its own part):
a transaction takes what it needs in this order, never the reverse, and several rows of one
kind in primary-key order, so two transactions never wait on each other in a circle.

    1. accounts: a user's row (accounts.locks), to queue one customer's creations (orders,
       webhook endpoints) before anything else
    2. the apps above rental, which call rental's intents holding their own locks:
       payments' rows 0-4 (the order's payment mutex, the chain cursor, crypto payments,
       chain transfers, withdrawals, ledger accounts: payments.locks) and pilot's order
       mutex (pilot.locks 0)
    3. rental, here:
       a. orders, by primary key
       b. an order's extension (only under its order's lock: which of the order's own rows
          comes next does not matter, the order's lock lets one transaction at a time in)
       c. GPU models, by primary key (a model's allocations and new orders, one at a time)
       d. tenancies, by primary key
       e. hosts, by primary key
    4. payments: the deposit-address counter, then the receipt counter (payments.locks 6, 7)
    5. alone, each in its own transaction: an outbox event's dispatch (outbox.locks), then
       the webhook endpoints it fans out to, then their deliveries (api.webhooks.locks); an
       API token (api.locks); a payment or withdrawal event's email (payments.locks)

Every lock is `SELECT ... FOR NO KEY UPDATE OF <this table>`: joined rows are read, not locked.
NO KEY: PostgreSQL checks a new row's foreign keys at COMMIT (Django's are deferred) with a KEY
SHARE lock on each referenced row, which FOR UPDATE blocks and FOR NO KEY UPDATE does not. With
FOR UPDATE, the payments' worker (holding a GPU model, committing rows that refer to a customer)
and that customer's new order (holding the customer, waiting for the GPU model) deadlocked: a
500 on "Confirm order" in the fault run (tests/rental/services/test_lock_deadlock.py).
"""

from collections.abc import Iterable

from django.db.models import QuerySet

from .models import GpuModel, Host, Order, OrderExtension, Tenancy


def _for_update(queryset: QuerySet) -> QuerySet:
    return queryset.select_for_update(of=("self",), no_key=True).order_by("pk")


def lock_order(order_id: int, *, customer=None) -> Order:
    """One order, locked (3a); with `customer`, only theirs. Raises Order.DoesNotExist."""
    rows = Order.objects.filter(pk=order_id)
    if customer is not None:
        rows = rows.filter(customer=customer)
    order = _for_update(rows).first()
    if order is None:
        raise Order.DoesNotExist()
    return order


def lock_extension(extension_id: int) -> OrderExtension:
    """One extension, locked (3b, under its order's lock). Raises DoesNotExist."""
    return _for_update(OrderExtension.objects.filter(pk=extension_id)).get()


def lock_gpu_models(gpu_model_ids: Iterable[int]) -> dict[int, GpuModel]:
    """These GPU models, locked in primary-key order (3c); a missing one is left out."""
    ids = sorted(set(gpu_model_ids))
    if not ids:
        return {}
    return {model.pk: model for model in _for_update(GpuModel.objects.filter(pk__in=ids))}


def lock_gpu_model(gpu_model_id: int) -> GpuModel | None:
    """One GPU model, locked (3c), or None when there is none."""
    return lock_gpu_models([gpu_model_id]).get(gpu_model_id)


def lock_tenancy(tenancy_id: int) -> Tenancy:
    """One tenancy, locked (3d). Raises Tenancy.DoesNotExist."""
    return _for_update(Tenancy.objects.filter(pk=tenancy_id)).get()


def lock_host(host_id: int) -> Host:
    """One host, locked (3e). Raises Host.DoesNotExist."""
    return _for_update(Host.objects.filter(pk=host_id)).get()
