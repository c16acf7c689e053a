"""The statement after an extension paid in tUSDC: the money credited to the balance reads as
received for that extension, with a link to its payment, before the extension's payment and
its receipt; a payment that arrived too late for its extension stays a plain credit."""

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from payments.models import Receipt, TransactionKind
from rental.services.lifecycle import order_end
from tests.rental.extensions.helpers import end_in

from . import test_extension_crypto
from .test_extension_crypto import open_payment, send_and_confirm

extension = test_extension_crypto.extension  # the fixture: a 3-day extension awaiting payment


def statement_rows(client) -> list[str]:
    html = client.get(reverse("payments:statement")).content.decode()
    return html[html.index("<tbody>") : html.index("</tbody>")].split("<tr")[1:]


def test_the_credit_of_an_extension_payment_names_the_extension_and_the_payment(
    chain, customer_client, extension, django_capture_on_commit_callbacks
):
    payment = open_payment(customer_client, extension)
    send_and_confirm(chain, payment, capture=django_capture_on_commit_callbacks)
    receipt = Receipt.objects.get(kind=TransactionKind.EXTENSION_PAYMENT)

    *_, credit, paid = statement_rows(customer_client)

    assert (
        f'data-field="movement">Received in tUSDC for extension {extension.reference}</span>'
        in credit
    )
    link = reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})
    assert f'(<a href="{link}" data-field="payment-link">{payment.reference}</a>)' in credit
    assert "201.60 USD" in credit and "Payment credited to the balance" not in credit
    assert 'data-field="movement">Extension payment<' in paid and "-201.60 USD" in paid
    assert f">Receipt {receipt.reference}<" in paid


def test_a_payment_too_late_for_its_extension_stays_a_plain_credit(
    chain, customer_client, extension, django_capture_on_commit_callbacks
):
    order = extension.order
    payment = open_payment(customer_client, extension)
    end_in(order, timedelta(seconds=-1))
    with django_capture_on_commit_callbacks(execute=True):
        order_end(order_id=order.pk, now=timezone.now())
    send_and_confirm(chain, payment, capture=django_capture_on_commit_callbacks)

    credit = statement_rows(customer_client)[-1]

    assert 'data-field="movement">Payment credited to the balance<' in credit
    assert "for extension" not in credit and "201.60 USD" in credit
