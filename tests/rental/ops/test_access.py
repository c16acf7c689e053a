"""Operators only: anonymous visitors go to the login page, everyone else gets 403, and a
refused POST changes nothing. CSRF is checked on every form."""

import pytest
from django.test import Client
from django.urls import reverse

from rental.models import CardAllocation, Host, Order, OrderStatus
from tests.mfa_fixtures import enrol_totp

NOTES = "Ubuntu 24.04, driver 570, CUDA 12.8."


@pytest.fixture
def urls(provisioning_order, waiting_order):
    host = Host.objects.get(name="demo-h100-a")
    order = provisioning_order.pk

    def action(order_id, name):
        return reverse("rental:ops_order_action", kwargs={"order_id": order_id, "action": name})

    return {
        "get": [
            reverse("rental:ops_hosts"),
            reverse("rental:ops_host_create"),
            reverse("rental:ops_host", kwargs={"host_id": host.pk}),
            reverse("rental:ops_provisioning"),
            reverse("rental:ops_order", kwargs={"order_id": order}),
        ],
        "post": [
            (reverse("rental:ops_host_create"), {"name": "intruder"}),
            (reverse("rental:ops_host", kwargs={"host_id": host.pk}), {"cards": "1"}),
            (action(order, "prepare"), {"access_notes": NOTES}),
            (action(order, "recheck"), {}),
            (action(waiting_order.pk, "allocate"), {}),
        ],
    }


def snapshot():
    return (
        list(Host.objects.order_by("pk").values()),
        list(Order.objects.order_by("pk").values()),
        CardAllocation.objects.count(),
    )


def test_anonymous_visitors_go_to_the_login_page(urls):
    browser = Client()
    before = snapshot()
    for url in urls["get"]:
        response = browser.get(url)
        assert response.status_code == 302, url
        assert response["Location"] == reverse("account_login") + "?next=" + url
    for url, data in urls["post"]:
        response = browser.post(url, data)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("account_login"))
    assert snapshot() == before


def test_customers_and_finance_are_refused_and_change_nothing(
    urls, customer_client, finance_client
):
    before = snapshot()
    for browser in (customer_client, finance_client):
        for url in urls["get"]:
            assert browser.get(url).status_code == 403, url
        for url, data in urls["post"]:
            assert browser.post(url, data).status_code == 403, url
    assert snapshot() == before


def test_superusers_are_operators(urls, make_customer):
    browser = Client()
    admin = make_customer(is_superuser=True, is_staff=True)
    enrol_totp(admin)
    browser.force_login(admin)
    for url in urls["get"]:
        assert browser.get(url).status_code == 200, url


def test_every_form_needs_the_csrf_token(urls, operator):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(operator)
    before = snapshot()
    for url, data in urls["post"]:
        assert browser.post(url, data).status_code == 403, url
    assert snapshot() == before
    assert Order.objects.get(pk=urls["post"][2][0].split("/")[-3]).status == (
        OrderStatus.PROVISIONING
    )


def test_the_operations_navigation_links_the_three_queues(operator_client, urls):
    queue = operator_client.get(reverse("payments:ops_queue")).content.decode()
    assert 'aria-label="Operations"' in queue
    assert f'href="{reverse("payments:ops_queue")}" aria-current="page"' in queue
    assert f'href="{reverse("rental:ops_provisioning")}"' in queue
    assert f'href="{reverse("rental:ops_hosts")}"' in queue
    for url in urls["get"]:
        html = operator_client.get(url).content.decode()
        assert html.count('aria-current="page"') == 1, url
