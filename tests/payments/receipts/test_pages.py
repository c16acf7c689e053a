"""The customer's receipts: the list, the printable page and the PDF, only for their owner,
in the language the receipt was issued in; and the links that lead to them."""

from io import BytesIO

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from pypdf import PdfReader

from accounts.models import BillingDetails
from payments.crypto.services.balance_payment import balance_pay_order
from payments.models import Receipt


def receipt_url(receipt: Receipt) -> str:
    return reverse("payments:receipt", kwargs={"number": receipt.number})


def pdf_url(receipt: Receipt) -> str:
    return reverse("payments:receipt_pdf", kwargs={"number": receipt.number})


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(BytesIO(content)).pages)


@pytest.fixture
def settings_issuer(settings):
    settings.RECEIPT_ISSUER_NAME = "GPU Rental Srl"
    settings.RECEIPT_ISSUER_ADDRESS = "Via Esempio 1\n00100 Roma"
    settings.RECEIPT_ISSUER_VAT_NUMBER = "IT09876543210"
    settings.RECEIPT_ISSUER_EMAIL = "billing@example.com"


def test_the_receipt_page_shows_issuer_customer_amount_and_billing(
    customer_client, customer, paid_order, settings_issuer
):
    BillingDetails.objects.create(
        user=customer, company_name="Hopper Computing Srl", address="Via Roma 1\nMilano"
    )
    order = paid_order(customer)
    receipt = Receipt.objects.get()

    response = customer_client.get(receipt_url(receipt))

    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-field="title">Receipt R-000001<' in html
    assert 'data-field="amount">893.76 USD<' in html
    assert receipt.description in html
    assert receipt.description == f"Order {order.reference}: {order.model_name} × 2, 7 days"
    assert "GPU Rental Srl" in html and "Via Esempio 1" in html and "IT09876543210" in html
    assert "Grace Hopper" in html and "grace@example.com" in html
    assert "Hopper Computing Srl" in html and "Via Roma 1\nMilano" in html
    assert 'data-field="method">USD balance<' in html
    assert f'href="{pdf_url(receipt)}"' in html
    assert "css/receipt.css" in html  # the print stylesheet


def test_the_pdf_opens_and_carries_number_amount_and_company(
    customer_client, customer, paid_order, settings_issuer
):
    BillingDetails.objects.create(user=customer, company_name="Hopper Computing Srl")
    order = paid_order(customer)
    receipt = Receipt.objects.get()

    response = customer_client.get(pdf_url(receipt))

    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="receipt-R-000001.pdf"'
    text = pdf_text(response.content)
    assert "Receipt R-000001" in text
    assert "893.76 USD" in text
    assert "Hopper Computing Srl" in text
    assert order.reference in text
    assert "GPU Rental Srl" in text and "Via Esempio 1" in text


def test_the_pdf_without_billing_details_leaves_them_out(customer_client, customer, paid_order):
    paid_order(customer, lots=1, duration_days=3)
    text = pdf_text(customer_client.get(pdf_url(Receipt.objects.get())).content)
    assert f"{Receipt.objects.get().amount_usd} USD" in text
    assert "Company" not in text and "VAT number" not in text


def test_an_italian_receipt_is_in_italian_whatever_the_page_language(
    make_customer, paid_order, settings_issuer
):
    italian = make_customer(language="it", first_name="Giulia", last_name="Rossi")
    BillingDetails.objects.create(user=italian, company_name="Rossi Calcolo Srl")
    order = paid_order(italian, lots=10, duration_days=30)
    receipt = Receipt.objects.get()
    browser = Client()
    browser.force_login(italian)

    html = browser.get(receipt_url(receipt)).content.decode()
    assert 'data-field="title">Ricevuta R-000001<' in html
    assert 'lang="it">' in html.split('<article class="receipt"')[1].split("\n")[0]
    # Only the receipt: the site around it (header, actions, footer) is the visitor's English.
    assert '<html lang="en">' in html
    page, document = html.split('<article class="receipt"')
    assert ">My orders<" in page and ">Download the PDF<" in page
    assert "Ricevuta" not in page.split("<title>")[1].split("<main")[1]
    assert ">Emessa<" in document and ">Issued<" not in document
    # Italian separators: thousands with a dot, decimals with a comma.
    amount = f"{order.total_usd:,.2f}".replace(",", "#").replace(".", ",").replace("#", ".")
    assert f'data-field="amount">{amount} USD<' in html
    assert f"Ordine {order.reference}" in html and "30 giorni" in html
    assert "Ragione sociale" in html and "Rossi Calcolo Srl" in html
    assert 'data-field="method">Saldo USD<' in html

    text = pdf_text(browser.get(pdf_url(receipt)).content)
    assert "Ricevuta R-000001" in text
    assert f"{amount} USD" in text
    assert "Ragione sociale" in text and "Rossi Calcolo Srl" in text
    assert "Pagato con" in text
    assert "Totale" in text


def test_another_customers_receipt_is_not_found(customer, make_customer, paid_order):
    paid_order(customer)
    receipt = Receipt.objects.get()
    stranger = Client()
    stranger.force_login(make_customer())
    assert stranger.get(receipt_url(receipt)).status_code == 404
    assert stranger.get(pdf_url(receipt)).status_code == 404
    assert "R-000001" not in stranger.get(reverse("payments:receipts")).content.decode()
    order_receipt = reverse(
        "payments:order_receipt", kwargs={"order_id": receipt.transaction.order_id}
    )
    assert stranger.get(order_receipt).status_code == 404


def test_a_number_never_issued_is_not_found(customer_client):
    assert (
        customer_client.get(reverse("payments:receipt", kwargs={"number": 99})).status_code == 404
    )
    assert (
        customer_client.get(reverse("payments:receipt_pdf", kwargs={"number": 99})).status_code
        == 404
    )


def test_receipts_need_a_login(customer, paid_order):
    paid_order(customer)
    receipt = Receipt.objects.get()
    for url in (receipt_url(receipt), pdf_url(receipt), reverse("payments:receipts")):
        response = Client().get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("account_login"))


def test_the_list_shows_the_newest_first_and_filters_by_order(
    customer_client, customer, paid_order
):
    first = paid_order(customer)
    second = paid_order(customer, lots=1, duration_days=3)

    html = customer_client.get(reverse("payments:receipts")).content.decode()
    assert html.index('data-receipt="2"') < html.index('data-receipt="1"')
    assert f'href="{reverse("payments:receipt_pdf", kwargs={"number": 2})}"' in html

    only_first = customer_client.get(
        reverse("payments:receipts"), {"order": str(first.pk)}
    ).content.decode()
    assert 'data-receipt="1"' in only_first and 'data-receipt="2"' not in only_first
    # A tampered filter is ignored, not an error.
    assert customer_client.get(reverse("payments:receipts"), {"order": "٣"}).status_code == 200
    assert second.reference in html


def test_the_order_page_links_a_paid_order_to_its_receipt(customer_client, customer, paid_order):
    order = paid_order(customer)
    html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": order.pk})
    ).content.decode()
    link = reverse("payments:order_receipt", kwargs={"order_id": order.pk})
    assert f'href="{link}"' in html
    response = customer_client.get(link)
    assert response.status_code == 302
    assert response["Location"] == receipt_url(Receipt.objects.get())


def test_an_unpaid_order_page_has_no_receipt_link(
    customer_client, customer, catalogue, place_order
):
    order = place_order(customer, catalogue["h100"], lots=1)
    html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": order.pk})
    ).content.decode()
    assert 'data-field="receipt-links"' not in html


def test_the_statement_and_the_account_page_link_to_receipts(customer_client, customer, paid_order):
    paid_order(customer)
    receipt = Receipt.objects.get()
    statement = customer_client.get(reverse("payments:statement")).content.decode()
    assert f'href="{receipt_url(receipt)}"' in statement
    overview = customer_client.get(reverse("accounts:overview")).content.decode()
    for name in ("payments:receipts", "payments:history", "accounts:billing"):
        assert f'href="{reverse(name)}"' in overview


def test_the_list_runs_as_many_queries_for_1_and_25_receipts(
    customer_client, customer, cheap_model, place_order, credit, settings
):
    settings.MAX_UNPAID_ORDERS = 100

    def pay_one():
        order = place_order(customer, cheap_model, lots=1, duration_days=3)
        credit(customer, "1.00")
        balance_pay_order(order_id=order.pk, customer=customer)

    def count() -> tuple[int, str]:
        with CaptureQueriesContext(connection) as queries:
            html = customer_client.get(reverse("payments:receipts")).content.decode()
        return len(queries), html

    pay_one()
    one, html = count()
    assert html.count("data-receipt=") == 1
    for _ in range(24):
        pay_one()
    many, html = count()
    assert html.count("data-receipt=") == 25
    assert one == many
