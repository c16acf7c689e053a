"""The order page writes the stablecoin radios itself: exactly what Django's RadioSelect writes."""

import re

import pytest
from django.urls import reverse

from payments.chain.forms import StablecoinForm
from payments.chain.selectors import stablecoin_choices

RADIOS = re.compile(r'<div id="id_stablecoin">.*?</div>\n</div>', re.S)


def order_url(order):
    return reverse("rental:order_detail", kwargs={"order_id": order.pk})


def the_radios(html: str) -> str:
    found = RADIOS.findall(html)
    assert len(found) == 1, html
    return found[0]


def test_one_network_the_single_choice_is_checked(customer_client, order, local_network):
    html = customer_client.get(order_url(order)).content.decode()

    expected = str(StablecoinForm(choices=stablecoin_choices())["stablecoin"])
    assert the_radios(html) == expected
    assert "checked" in expected


def test_several_networks_none_is_checked(customer_client, order, settings):
    settings.PAYMENT_RPC_URLS = dict.fromkeys(settings.PAYMENT_RPC_URLS) | {
        "base": "http://127.0.0.1:9"
    }
    html = customer_client.get(order_url(order)).content.decode()

    expected = str(StablecoinForm(choices=stablecoin_choices())["stablecoin"])
    assert the_radios(html) == expected
    assert expected.count('type="radio"') >= 2
    assert "checked" not in expected


@pytest.mark.parametrize("choice", ["nonsense", ""])
def test_a_refused_choice_marks_the_radios_invalid(customer_client, order, local_network, choice):
    pay_url = reverse("payments:pay_crypto", kwargs={"order_id": order.pk})
    response = customer_client.post(pay_url, {"stablecoin": choice})
    assert response.status_code == 400

    form = StablecoinForm({"stablecoin": choice}, choices=stablecoin_choices())
    assert not form.is_valid()
    expected = str(form["stablecoin"])
    assert the_radios(response.content.decode()) == expected
    assert 'aria-invalid="true"' in expected
