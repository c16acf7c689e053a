"""access.ready when a host's access is verified by logging in as the tenant, access.revoked
when it is verified revoked and erased: each once, written by the tenancy's one setter, on a
real host (the worker's playbooks over SSH)."""

from datetime import timedelta

import pytest

from outbox.models import OutboxEvent
from rental.hosts.models import Tenancy, TenancyStatus
from rental.services.lifecycle import rentals_tick

pytestmark = pytest.mark.django_db(transaction=True)


def events_of(customer, event_type) -> list[OutboxEvent]:
    return list(OutboxEvent.objects.filter(account=customer, event_type=event_type).order_by("pk"))


def test_access_ready_then_revoked_once_each_with_the_host_and_cards(
    register_host, paid_order, catalogue, customer
):
    host, _machine = register_host(cards=2)

    order = paid_order(catalogue["h100"], lots=1)

    tenancy = Tenancy.objects.get(order=order)
    assert tenancy.status == TenancyStatus.READY
    (ready,) = events_of(customer, "access.ready")
    assert ready.payload["order"]["reference"] == order.reference
    shown = ready.payload["host"]
    assert (shown["name"], shown["ssh_user"], shown["status"]) == (
        host.name,
        tenancy.account,
        "ready",
    )
    assert shown["cards"] == [index + 1 for index in tenancy.cards]
    assert shown["ssh_command"].endswith(f"{tenancy.account}@{host.ssh_host}")
    assert events_of(customer, "access.revoked") == []

    rentals_tick(now=order.ends_at + timedelta(seconds=1))
    rentals_tick(now=order.ends_at + timedelta(minutes=1))

    tenancy.refresh_from_db()
    assert tenancy.status == TenancyStatus.ERASED, tenancy.problem
    (revoked,) = events_of(customer, "access.revoked")
    assert revoked.payload["host"]["status"] == "erased"
    assert revoked.payload["host"]["erased_at"] == tenancy.erased_at.isoformat()
    assert len(events_of(customer, "access.ready")) == 1
    assert len(events_of(customer, "order.ended")) == 1
