"""The address guard: internal addresses refused in production settings (also after DNS
resolution), at save time and at delivery time; allowed in development and tests."""

import pytest

from api.webhooks import guard
from api.webhooks.exceptions import InvalidEndpoint
from api.webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from api.webhooks.services.endpoints import endpoint_create

REFUSED = [
    "http://127.0.0.1/hook",
    "http://127.1.2.3:8080/hook",
    "http://10.0.0.5/hook",
    "http://172.16.0.1/hook",
    "http://192.168.1.10/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[fe80::1]/hook",
    "http://[fd00::1]/hook",
    "http://[fec0::1]/hook",  # site-local (deprecated, but routed inside some networks)
    "http://0.0.0.0/hook",
    "http://224.0.0.1/hook",
    "http://100.64.0.1/hook",
    "http://localhost:8000/hook",  # a host name that resolves to loopback
]


@pytest.mark.parametrize("url", REFUSED)
def test_internal_addresses_are_refused_in_production(url):
    with pytest.raises(guard.AddressRefused):
        guard.check(url, allow_private=False)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "http://user:pw@example.com/",
        "http:///x",
        "javascript:alert(1)",
        "",
        "http://exa mple.com/",
        "http://[::1/",
    ],
)
def test_what_is_not_an_http_url_is_refused_in_any_setting(url):
    with pytest.raises(guard.AddressRefused):
        guard.check(url, allow_private=True)


def test_a_public_address_passes_and_is_the_one_connected_to():
    target = guard.check("https://93.184.215.14:8443/in?x=1", allow_private=False)
    assert target.addresses == ("93.184.215.14",)
    assert (target.scheme, target.port, target.path) == ("https", 8443, "/in?x=1")
    assert target.host_header == "93.184.215.14:8443"


def test_loopback_is_allowed_in_tests():
    assert guard.check("http://localhost:9/hook").addresses  # the test settings allow it


@pytest.mark.django_db
def test_saving_an_internal_url_in_production_is_refused_and_saves_nothing(customer, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    for url in ("http://127.0.0.1:8000/hook", "http://localhost/hook", "http://10.1.2.3/"):
        with pytest.raises(InvalidEndpoint) as refused:
            endpoint_create(owner=customer, url=url, events=["order.paid"])
        assert refused.value.field == "url"
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.django_db
def test_delivery_checks_again_and_refuses_an_address_that_became_internal(
    customer, receiver, endpoint_for, credit, django_capture_on_commit_callbacks, settings
):
    endpoint = endpoint_for(customer, events=["balance.credited"])  # saved while allowed
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False  # as if DNS now pointed inside
    with django_capture_on_commit_callbacks(execute=True):
        credit(customer, "3.00")
    assert receiver.received == []
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.response_code is None
    assert "internal address" in delivery.error
