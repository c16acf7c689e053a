"""The migration to hosts keeps what was true before it: emails sent, orders paid."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("rental", "0002_order_paid_notified_at")]
AFTER = [("rental", "0003_hosts_allocations_lifecycle")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def latest_schema_afterwards():
    """Whatever happens in the test, the database goes back to the latest schema."""
    yield
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_sent_payment_emails_and_paid_orders_survive_the_move_to_hosts(
    make_customer, latest_schema_afterwards
):
    customer = make_customer()
    old = migrate(BEFORE)
    GpuModel = old.get_model("rental", "GpuModel")
    Order = old.get_model("rental", "Order")
    model = GpuModel.objects.create(
        slug="old-gpu",
        name="Old GPU",
        vendor="Test",
        compute_platform="cuda",
        memory_gb_per_card=16,
        cards_per_lot=1,
        description="x",
        lots_in_stock=5,
    )
    common = dict(
        customer_id=customer.pk,
        gpu_model=model,
        model_name="Old GPU",
        vendor="Test",
        compute_platform="cuda",
        memory_gb_per_card=16,
        cards_per_lot=1,
        duration_days=3,
        lots=1,
        total_cards=1,
        preparation="ubuntu",
        lot_price_usd=Decimal("10.00"),
        total_usd=Decimal("10.00"),
    )
    paid = Order.objects.create(status="paid", paid_notified_at="2026-11-01T10:00Z", **common)
    waiting = Order.objects.create(status="awaiting_payment", **common)

    new = migrate(AFTER)

    Order = new.get_model("rental", "Order")
    OrderEmail = new.get_model("rental", "OrderEmail")
    assert list(OrderEmail.objects.values_list("order_id", "kind")) == [
        (paid.pk, "payment_received")
    ]
    assert Order.objects.get(pk=paid.pk).provisioning_issue == "capacity"
    assert Order.objects.get(pk=waiting.pk).provisioning_issue == ""
