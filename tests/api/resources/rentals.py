"""Orders in the states the money resources need, made through the real services (as the
pages and the worker make them)."""

import pytest

from payments.crypto.services.balance_payment import balance_pay_order
from rental.models import Order, OrderStatus
from tests.states import order_to_active


@pytest.fixture
def active_order(customer, credit, catalogue, place_order):
    """active_order(who=customer, balance="5000.00"): an active H100 order of 2 lots for 7
    days (893.76 USD), paid from the balance, which keeps what is left."""

    def make(who=None, *, balance: str = "5000.00", lots: int = 2) -> Order:
        who = who or customer
        credit(who, balance)
        order = place_order(who, catalogue["h100"], lots=lots, duration_days=7)
        balance_pay_order(order_id=order.pk, customer=who)
        order.refresh_from_db()
        assert order.status == OrderStatus.PROVISIONING, order.status
        return order_to_active(order)

    return make
