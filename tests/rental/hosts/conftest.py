"""Paid orders on worker-managed local hosts (register_host and customer_key are in
tests/host_fixtures.py)."""

from pathlib import Path

import pytest

from rental.services.orders import order_mark_paid


@pytest.fixture
def paid_order(place_order, customer, customer_key):
    """paid_order(gpu_model, lots=1) -> the order, paid (tasks run at once after the commit:
    the worker's provisioning and verification included)."""

    def pay(gpu_model, lots: int = 1, who=None, key: Path | None = None, **options):
        who = who or customer
        who.ssh_public_key = (key or customer_key).with_suffix(".pub").read_text().strip()
        who.save(update_fields=["ssh_public_key"])
        order = place_order(who, gpu_model, lots=lots, **options)
        order_mark_paid(order_id=order.pk, actor=None, reason="Paid in the test")
        order.refresh_from_db()
        return order

    return pay
