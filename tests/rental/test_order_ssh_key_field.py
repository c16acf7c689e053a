"""The order page writes its SSH-key field itself: exactly what Django's as_field_group writes,
with and without an error, in English and Italian."""

import re

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from rental.forms import OrderSshKeyForm

FIELD = re.compile(r'<label for="id_ssh_public_key">.*?</textarea>', re.S)


def the_field(html: str) -> str:
    found = FIELD.findall(html)
    assert len(found) == 1, html
    return found[0]


@pytest.fixture
def order(customer, catalogue, place_order):
    return place_order(customer, catalogue["h100"], lots=1)


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_empty_field_is_what_django_writes(customer_client, customer, order, language):
    customer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    url = reverse("rental:order_detail", kwargs={"order_id": order.pk})

    html = customer_client.get(url).content.decode()

    with translation.override(language):
        expected = str(OrderSshKeyForm(customer=customer)["ssh_public_key"].as_field_group())
    assert the_field(html) == expected
    assert 'aria-describedby="id_ssh_public_key_helptext"' in expected


@pytest.mark.parametrize("language", ["en", "it"])
def test_a_refused_key_is_shown_as_django_writes_it(customer_client, customer, order, language):
    customer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    url = reverse("rental:order_ssh_key", kwargs={"order_id": order.pk})
    data = {"ssh_public_key": "nonsense <b>"}

    response = customer_client.post(url, data)

    assert response.status_code == 400
    with translation.override(language):
        form = OrderSshKeyForm(data, customer=customer)
        assert not form.is_valid()
        expected = str(form["ssh_public_key"].as_field_group())
    assert the_field(response.content.decode()) == expected
    assert 'aria-invalid="true"' in expected
    assert "nonsense &lt;b&gt;</textarea>" in expected
