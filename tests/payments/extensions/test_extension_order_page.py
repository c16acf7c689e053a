"""The order page's extensions after they are paid: each paid one links to its receipt, and
once the order is ended early a paid extension says so instead of "until" its end."""

import re

from django.test import Client
from django.urls import reverse

from payments.crypto.services.extensions import extension_pay_from_balance
from payments.ledger.services.refunds import order_end_early_with_refund
from payments.models import Receipt, TransactionKind
from rental.services import extension_create


def order_page(client, order) -> str:
    html = client.get(reverse("rental:order_detail", kwargs={"order_id": order.pk})).content
    return re.sub(r"\s+", " ", html.decode())


def extension_row(html: str, extension) -> str:
    return html.split(f'data-extension="{extension.reference}"')[1].split("</li>")[0]


def test_a_paid_extension_links_to_its_receipt_and_says_when_the_order_ended_early(
    customer_client,
    customer,
    make_customer,
    operator,
    active_order,
    django_capture_on_commit_callbacks,
):
    order = active_order(customer)
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    with django_capture_on_commit_callbacks(execute=True):
        extension_pay_from_balance(extension_id=extension.pk, customer=customer)
    receipt = Receipt.objects.get(kind=TransactionKind.EXTENSION_PAYMENT)

    row = extension_row(order_page(customer_client, order), extension)
    link = reverse("payments:extension_receipt", kwargs={"extension_id": extension.pk})
    assert f'href="{link}" data-field="extension-receipt">Receipt<' in row
    assert "until <time" in row and "ended early" not in row
    followed = customer_client.get(link)
    assert followed.status_code == 302
    assert followed["Location"] == reverse("payments:receipt", kwargs={"number": receipt.number})
    stranger = Client()
    stranger.force_login(make_customer())
    assert stranger.get(link).status_code == 404  # another customer's extension

    with django_capture_on_commit_callbacks(execute=True):
        order_end_early_with_refund(
            order_id=order.pk, actor=operator, reason="The host failed.", host_failed=True
        )

    row = extension_row(order_page(customer_client, order), extension)
    assert 'data-field="extension-status">Paid<' in row
    assert 'data-field="extension-ended-early">the rental was ended early on <time' in row
    assert "refunded with the order" in row
    assert "until <time" not in row
    assert f'href="{link}"' in row  # its receipt stays
