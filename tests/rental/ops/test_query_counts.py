"""The operators' pages run a fixed number of queries, the same for 1 and 20 orders per
section of the provisioning queue."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from payments.crypto.services.balance_payment import balance_pay_order
from rental.models import Host, HostState, Order, OrderStatus, OrderStatusChange
from rental.services.provisioning import (
    order_host_not_ready,
    order_mark_prepared,
    order_set_ssh_key,
)
from tests.conftest import set_stock
from tests.states import hosts_set_state, order_to_active

from .conftest import SSH_KEY


def count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


@pytest.fixture
def fill(catalogue, place_order, make_customer, credit, settings):
    """Add `count` orders to each section of the queue, each through the services that put it
    there: paid from the balance (cards allocated, or none free), the customer's key, the
    operator's "prepared", the worker giving up on readiness, the readiness check's "active"."""
    settings.MAX_UNPAID_ORDERS = 5  # each customer places 5 orders before they move on
    h100 = catalogue["h100"]
    hosts = set_stock(h100, 200)  # room for 20 × 5 orders held at once, on 4 hosts

    def pay(order):
        balance_pay_order(order_id=order.pk, customer=order.customer)

    def add(count):
        placed = []
        for _ in range(count):
            who = make_customer()
            credit(who, "20000.00")
            placed.append([place_order(who, h100) for _ in range(5)])
        # The waiting ones are paid while every H100 host is set aside: no card is free.
        hosts_set_state(hosts, HostState.MAINTENANCE)
        for waiting, *_rest in placed:
            pay(waiting)
        hosts_set_state(hosts, HostState.AVAILABLE)
        for _waiting, to_prepare, checking, failed, active in placed:
            for order in (to_prepare, checking, failed, active):
                pay(order)
                order_set_ssh_key(order_id=order.pk, customer=order.customer, key_text=SSH_KEY)
            for order in (checking, failed, active):
                order_mark_prepared(order_id=order.pk, actor=None, access_notes="")
            order_host_not_ready(order_id=failed.pk, detail="No SSH banner after 3 checks")
            order_to_active(Order.objects.get(pk=active.pk))

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
    # (the refund's cap); its tenancies with their hosts, and their journal steps.
    assert order_one == count_queries(operator_client, order_url) == 13
