"""The operators' pages run a fixed number of queries, the same for 1 and 20 orders per
section of the provisioning queue."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from rental.models import (
    CardAllocation,
    Host,
    Order,
    OrderStatus,
    OrderStatusChange,
    ProvisioningIssue,
)
from tests.conftest import set_stock

from .conftest import SSH_KEY


def count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


@pytest.fixture
def fill(catalogue, customer, place_order, make_customer, settings):
    """Add `count` orders to each section of the queue, each on its own host cards."""
    settings.MAX_UNPAID_ORDERS = 5  # each customer places 5 orders before they move on
    h100 = catalogue["h100"]
    hosts = set_stock(h100, 1000)
    next_card = {host.pk: 0 for host in hosts}

    def allocate(order):
        host = next(host for host in hosts if next_card[host.pk] < host.cards)
        CardAllocation.objects.create(order=order, host=host, lot=1, card_index=next_card[host.pk])
        next_card[host.pk] += 1

    def add(count):
        now = timezone.now()
        for _ in range(count):
            who = make_customer()
            orders = [place_order(who, h100) for _ in range(5)]
            waiting, to_prepare, checking, failed, active = orders
            for order in orders:
                OrderStatusChange.objects.create(
                    order=order, from_status="awaiting_payment", to_status=OrderStatus.PAID
                )
            Order.objects.filter(pk=waiting.pk).update(
                status=OrderStatus.PAID,
                provisioning_issue=ProvisioningIssue.CAPACITY,
                provisioning_issue_detail="Needs 1 lot(s)",
            )
            Order.objects.filter(pk__in=[to_prepare.pk, checking.pk, failed.pk]).update(
                status=OrderStatus.PROVISIONING, ssh_public_key=SSH_KEY
            )
            Order.objects.filter(pk__in=[checking.pk, failed.pk]).update(prepared_at=now)
            Order.objects.filter(pk=failed.pk).update(
                provisioning_issue=ProvisioningIssue.READINESS,
                provisioning_issue_detail="No SSH banner after 3 checks",
            )
            Order.objects.filter(pk=active.pk).update(
                status=OrderStatus.ACTIVE,
                prepared_at=now,
                starts_at=now,
                ends_at=now + timedelta(days=7),
            )
            for order in (to_prepare, checking, failed, active):
                allocate(order)

    return add


def test_the_provisioning_queue_runs_a_fixed_number_of_queries(operator_client, fill):
    url = reverse("rental:ops_provisioning")
    fill(1)
    with_one = count_queries(operator_client, url)
    html = operator_client.get(url).content.decode()
    for heading in (
        "Waiting for cards (1)",
        "To prepare (1)",
        "Checking readiness (1)",
        "SSH did not answer (1)",
        "Active rental (1)",
    ):
        assert heading in html
    fill(19)
    with_twenty = count_queries(operator_client, url)
    html = operator_client.get(url).content.decode()
    for heading in (
        "Waiting for cards (20)",
        "To prepare (20)",
        "Checking readiness (20)",
        "SSH did not answer (20)",
        "Active rentals (20)",
    ):
        assert heading in html
    # The session comes from the cache (Redis): user with their staff groups (guard and
    # navigation), orders, their live cards; the health banner (failing tasks and networks,
    # one query).
    assert with_one == with_twenty == 4


def test_the_hosts_page_runs_a_fixed_number_of_queries(operator_client, fill, catalogue):
    url = reverse("rental:ops_hosts")
    fill(1)
    with_one = count_queries(operator_client, url)
    for number in range(20):
        Host.objects.create(
            management="manual",
            name=f"extra-{number}",
            gpu_model=catalogue["h200"],
            cards=8,
            ssh_host="10.0.0.1",
            ssh_user="ubuntu",
        )
    fill(19)
    # User with their staff groups, hosts with their models and rented cards; health banner.
    assert with_one == count_queries(operator_client, url) == 3


def test_the_host_and_order_pages_run_a_fixed_number_of_queries(operator_client, fill):
    fill(1)
    host = Host.objects.filter(allocations__isnull=False).distinct().first()
    order = Order.objects.filter(status=OrderStatus.ACTIVE).first()
    host_url = reverse("rental:ops_host", kwargs={"host_id": host.pk})
    order_url = reverse("rental:ops_order", kwargs={"order_id": order.pk})
    host_one, order_one = (
        count_queries(operator_client, host_url),
        count_queries(operator_client, order_url),
    )
    fill(19)
    for number in range(20):
        OrderStatusChange.objects.create(order=order, to_status=OrderStatus.ACTIVE)
    # User with groups; the host; the GPU models of the form; the orders holding its cards;
    # its last state changes; the health banner.
    assert host_one == count_queries(operator_client, host_url) == 6
    # User with groups; the order with customer and preparer; timeline; handover events;
    # cards per host; the health banner; the pilot's diagnostics reports and decisions; for
    # ending it early, its hosts in maintenance, its paid extensions and the revenue booked
    # (the refund's cap); its tenancies with their hosts (none here: this fixture allocates
    # cards by hand; with tenancies, their journal steps are one query more, whatever their count).
    assert order_one == count_queries(operator_client, order_url) == 12
