"""Operators, and orders at each step from paid to active, made through the real services."""

import pytest

from payments.crypto.services.balance_payment import balance_pay_order
from rental.models import Host, HostState, Order, OrderStatus
from tests.states import hosts_set_state

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl test@example"
)
SSH_KEY_FINGERPRINT = "SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU"


@pytest.fixture
def pay(credit):
    """Pay an order from the customer's balance: cards are allocated in the same transaction
    (the order is provisioning), or the order stays paid waiting for cards."""

    def pay_order(order: Order) -> Order:
        credit(order.customer, "20000.00")
        balance_pay_order(order_id=order.pk, customer=order.customer)
        order.refresh_from_db()
        return order

    return pay_order


def give_key(order: Order, key: str = SSH_KEY) -> Order:
    Order.objects.filter(pk=order.pk).update(ssh_public_key=key)
    order.refresh_from_db()
    return order


@pytest.fixture
def provisioning_order(catalogue, customer, place_order, pay):
    """An H100 order of two lots, paid from the balance: two cards allocated, key given."""
    order = pay(place_order(customer, catalogue["h100"], lots=2))
    assert order.status == OrderStatus.PROVISIONING
    return give_key(order)


@pytest.fixture
def waiting_order(catalogue, customer, place_order, pay):
    """An H200 order paid while every H200 host is in maintenance: waiting for cards."""
    order = place_order(customer, catalogue["h200"], lots=1)
    hosts_set_state(Host.objects.filter(gpu_model=catalogue["h200"]), HostState.MAINTENANCE)
    order = pay(order)
    assert order.status == OrderStatus.PAID
    assert order.provisioning_issue == "capacity"
    return order
