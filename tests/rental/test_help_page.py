"""The help page: the guide's answers in English and Italian, the contact address from the
settings, the figures from the settings, and a link to it from every page's footer."""

import pytest
from django.urls import reverse

from tests.test_i18n import italian

pytestmark = pytest.mark.django_db

SECTIONS = [
    "lots",
    "preparation",
    "crypto",
    "holds",
    "end",
    "extend",
    "refunds",
    "withdrawals",
    "receipts",
    "pilot",
    "contact",
]


def test_the_help_page_answers_each_question_with_the_settings_figures(client, settings):
    settings.SUPPORT_EMAIL = "aiuto@gpu.example"
    settings.ORDER_HOLD_MINUTES = 45
    settings.PAYMENT_MONITOR_HOURS = 36
    settings.WITHDRAWAL_MIN_USD = "25.00"
    html = client.get(reverse("rental:help")).content.decode()
    for name in SECTIONS:
        assert f'data-section="{name}"' in html and f'href="#{name}"' in html
    assert 'href="mailto:aiuto@gpu.example"' in html
    assert "for 45 minutes while it waits for payment" in html
    assert "still watched for 36 hours" in html
    assert "a B200 lot price already includes its two cards" in html
    assert "It does not prove that your project" in html
    assert "at least 25.00 USD, at most your balance" in html
    assert "our servers hold no keys" in html
    assert "the same cards stay yours, the end moves" in html
    assert "numbered without gaps" in html


def test_the_help_page_speaks_italian(client):
    client.post(reverse("set_language"), {"language": "it", "next": "/help/"})
    html = client.get(reverse("rental:help")).content.decode()
    assert '<html lang="it">' in html
    assert italian("Lots and cards") in html
    assert "Un lotto contiene una scheda, tranne B200 che ne contiene due." in html
    assert "«Ho pagato» registra la tua segnalazione" in html
    assert "Lots and cards" not in html


@pytest.mark.parametrize("name", ["rental:catalogue", "rental:configure", "account_login"])
def test_every_page_links_to_help_from_its_footer(client, catalogue, name):
    html = client.get(reverse(name)).content.decode()
    assert f'href="{reverse("rental:help")}" data-field="help-link"' in html


def test_the_help_page_refuses_a_post(client):
    assert client.post(reverse("rental:help")).status_code == 405
