"""Amounts written by Python into the withdrawal form follow the reader's language: the help
under the amount, the minimum and the balance in the errors ("5,251.60" / "5.251,60")."""

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.usefixtures("local_network")

WITHDRAW = reverse("payments:withdraw")


def reader(customer, language: str) -> Client:
    client = Client()
    client.force_login(customer)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    return client


@pytest.mark.parametrize(
    ("language", "help_text", "too_little", "too_much"),
    [
        (
            "en",
            "From 10.00 USD up to your balance, 5,251.60 USD, with at most two decimals.",
            "The minimum withdrawal is 10.00 USD.",
            "Your balance is 5,251.60 USD",
        ),
        (
            "it",
            "Da 10,00 USD fino al tuo saldo, 5.251,60 USD, con al massimo due decimali.",
            "Il prelievo minimo è di 10,00 USD.",
            "5.251,60 USD",
        ),
    ],
)
def test_the_form_writes_its_amounts_in_the_readers_language(
    funded, credit, language, help_text, too_little, too_much
):
    credit(funded, "5151.60")  # 5,251.60 in all
    browser = reader(funded, language)

    html = browser.get(WITHDRAW).content.decode()
    assert help_text in html
    assert "5251.60 USD" not in html.split('name="amount"')[1]

    for amount, message in (("9.99", too_little), ("6000.00", too_much)):
        response = browser.post(
            WITHDRAW,
            {"amount": amount, "stablecoin": "local:tUSDC", "to_address": "", "step": "confirm"},
        )
        assert response.status_code == 400
        assert message in " ".join(response.context["form"].errors["amount"])
