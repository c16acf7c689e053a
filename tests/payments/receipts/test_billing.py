"""Optional billing details for receipts: never required, lengths limited, bad input changes
nothing."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import BillingDetails

BILLING = reverse("accounts:billing")


def test_the_page_says_the_details_are_optional(customer_client):
    html = customer_client.get(BILLING).content.decode()
    assert (
        "Optional — shown on receipts issued from now on; we never ask for an identity document."
        in html
    )
    assert 'name="company_name"' in html and 'name="vat_number"' in html
    assert "required" not in html.split('class="billing-form"')[1].split("</form>")[0]


def test_saving_and_reading_back_the_details(customer_client, customer):
    response = customer_client.post(
        BILLING,
        {"company_name": "  Hopper Computing Srl ", "vat_number": "IT01234567890", "address": ""},
    )
    assert response.status_code == 302
    details = BillingDetails.objects.get(user=customer)
    assert (details.company_name, details.vat_number, details.address) == (
        "Hopper Computing Srl",
        "IT01234567890",
        "",
    )
    html = customer_client.get(BILLING).content.decode()
    assert 'value="Hopper Computing Srl"' in html
    assert "Your billing details are saved for the next receipts." in html


def test_everything_empty_is_fine(customer_client, customer):
    response = customer_client.post(BILLING, {})
    assert response.status_code == 302
    assert BillingDetails.objects.get(user=customer).as_receipt() == {}


@pytest.mark.parametrize(
    ("field", "length", "limit"),
    [("company_name", 201, 200), ("vat_number", 41, 40), ("address", 501, 500)],
)
def test_too_long_is_refused_with_a_field_message_and_nothing_saved(
    customer_client, customer, field, length, limit
):
    BillingDetails.objects.create(user=customer, company_name="Kept Srl")
    response = customer_client.post(BILLING, {"company_name": "New Srl", field: "x" * length})
    assert response.status_code == 400
    html = response.content.decode()
    assert f"Ensure this value has at most {limit} characters (it has {length})." in html
    assert BillingDetails.objects.get(user=customer).company_name == "Kept Srl"


def test_a_nul_character_is_refused(customer_client, customer):
    response = customer_client.post(BILLING, {"company_name": "Bad\x00Srl"})
    assert response.status_code == 400
    assert not BillingDetails.objects.filter(user=customer).exists()


def test_saving_needs_a_csrf_token_and_a_login(customer):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(customer)
    assert strict.post(BILLING, {"company_name": "X"}).status_code == 403
    assert Client().post(BILLING, {"company_name": "X"}).status_code == 302  # to the login
    assert not BillingDetails.objects.exists()
