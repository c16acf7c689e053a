"""The order pages run a fixed number of queries, the same with 1 and with 20 reports and
decisions (customer's page, its status poll, the operators' page)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from pilot.models import PilotDecision
from pilot.services.reports import report_store
from rental.models import OrderStatus

from .conftest import build_report, encode

pytestmark = pytest.mark.django_db


def count_queries(client, url, **kwargs) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, **kwargs)
    assert response.status_code == 200
    return len(queries), response.content.decode()


def add(order, count: int) -> None:
    for number in range(count):
        failed = "compute" if number % 2 else None
        report = report_store(order=order, raw=encode(build_report(order, failed=failed)))
        PilotDecision.objects.create(
            order=order,
            kind="fix_environment",
            motivation=f"Try {number}: one factor at a time.",
            report=report,
            actor=order.customer,
        )


def test_the_customer_s_order_page_runs_as_many_queries_for_1_and_20(customer_client, active_order):
    url = reverse("rental:order_detail", kwargs={"order_id": active_order.pk})
    add(active_order, 1)
    with_one, html = count_queries(customer_client, url)
    assert html.count('data-entry="report"') == 1
    add(active_order, 19)
    with_twenty, html = count_queries(customer_client, url)
    assert html.count('data-entry="report"') == 20
    assert html.count('data-entry="decision"') == 20
    # User with staff groups (navigation), order, timeline, cards with their hosts; the
    # pilot's reports, its decisions; the order's extensions (rental.selectors_extensions).
    assert with_one == with_twenty == 7


def test_the_status_poll_runs_as_many_queries_for_1_and_20(customer_client, funded, make_order):
    order = make_order(funded, status=OrderStatus.PROVISIONING)
    url = reverse("rental:order_status", kwargs={"order_id": order.pk})
    add(order, 1)
    with_one, _html = count_queries(customer_client, url, headers={"HX-Request": "true"})
    add(order, 19)
    with_twenty, html = count_queries(customer_client, url, headers={"HX-Request": "true"})
    assert html.count('data-entry="decision"') == 20  # the timeline, out of band
    # User, order, timeline, each host's access (cards with their tenancies: its state, and
    # the status version that changes with it); the pilot's reports and decisions (for the
    # timeline).
    assert with_one == with_twenty == 6


def test_an_unpaid_order_s_page_costs_no_pilot_query(customer_client, funded, make_order):
    order = make_order(funded, status=OrderStatus.AWAITING_PAYMENT)
    url = reverse("rental:order_detail", kwargs={"order_id": order.pk})
    count, html = count_queries(customer_client, url)
    assert 'data-section="pilot"' not in html
    # As before the pilot: user, order, timeline, balance for the payment step.
    assert count == 4


def test_the_operators_order_page_runs_as_many_queries_for_1_and_20(operator_client, active_order):
    url = reverse("rental:ops_order", kwargs={"order_id": active_order.pk})
    add(active_order, 1)
    with_one, _html = count_queries(operator_client, url)
    add(active_order, 19)
    with_twenty, html = count_queries(operator_client, url)
    assert html.count("data-report=") == 20
    # User with groups; the order with customer and preparer; timeline; issue events; each
    # host's access (the tenancies with their hosts, their journal of steps); cards per host;
    # the health banner; the pilot's reports, its decisions; for ending it early, its hosts in
    # maintenance, its paid extensions and the revenue booked (the refund's cap).
    assert with_one == with_twenty == 13
