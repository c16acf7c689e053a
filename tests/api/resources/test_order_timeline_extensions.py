"""An extension is in the order's timeline — asked for, paid with the rental's new end, or
cancelled — on the order page and in the API's order detail alike (issue 23; seen failing: the
timeline had the order's status changes only)."""

import re
from html import unescape

import pytest
from django.urls import reverse

from payments.crypto.services.extensions import extension_pay_from_balance
from rental.services import extension_cancel, extension_create
from tests.rental.extensions.helpers import make_active
from tests.rental.test_order_emails import utc


@pytest.fixture
def order(customer, credit, catalogue, place_order, sshd, django_capture_on_commit_callbacks):
    credit(customer, "5000.00")
    placed = place_order(customer, catalogue["h100"], lots=1, duration_days=7)
    return make_active(placed, sshd, django_capture_on_commit_callbacks)


def page_timeline(customer_client, order) -> list[str]:
    html = customer_client.get(reverse("rental:order_detail", kwargs={"order_id": order.pk}))
    section = html.content.decode().split('id="order-timeline"', 1)[1].split("</section>", 1)[0]
    return [
        " ".join(unescape(re.sub(r"<[^>]+>", "", item)).split())
        for item in re.findall(r"<li[^>]*>(.*?)</li>", section, re.S)
    ]


def api_timeline(api, order) -> list[dict]:
    response = api.get(f"/api/v1/orders/{order.pk}/")
    assert response.status_code == 200
    return response.json()["timeline"]


def test_an_extension_asked_for_paid_and_its_new_end_are_in_the_timeline(
    customer, customer_client, api, order, django_capture_on_commit_callbacks
):
    first = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    extension_cancel(extension_id=first.pk, customer=customer)
    second = extension_create(order_id=order.pk, customer=customer, duration_days=7)
    with django_capture_on_commit_callbacks(execute=True):
        extension_pay_from_balance(extension_id=second.pk, customer=customer)
    order.refresh_from_db()
    new_end = utc(order.ends_at)

    expected = [
        f"Extension {first.reference} asked for: 3 more days, 201.60 USD",
        f"Extension {first.reference} cancelled",
        f"Extension {second.reference} asked for: 7 more days, 446.88 USD",
        f"Extension {second.reference} paid: the rental now ends on {new_end}",
    ]
    on_page = page_timeline(customer_client, order)
    assert [line.split(" — ", 1)[1] for line in on_page[-4:]] == expected, on_page
    assert on_page[0].endswith("— Awaiting payment")  # the order's own changes stay first

    in_api = api_timeline(api, order)
    assert [(entry["kind"], entry["text"]) for entry in in_api[-4:]] == [
        ("extension", text) for text in expected
    ]
    assert [entry["at"] for entry in in_api] == sorted(entry["at"] for entry in in_api)
