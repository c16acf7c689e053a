import pytest

from tests.rental.extensions.helpers import make_active


@pytest.fixture
def active_order(credit, catalogue, place_order, sshd, django_capture_on_commit_callbacks):
    """active_order(customer, lots=1, duration_days=7, balance="5000.00") -> an active H100
    order; the balance keeps what its payment left."""

    def make(customer, *, lots: int = 1, duration_days: int = 7, balance: str = "5000.00"):
        credit(customer, balance)
        order = place_order(customer, catalogue["h100"], lots=lots, duration_days=duration_days)
        return make_active(order, sshd, django_capture_on_commit_callbacks)

    return make
