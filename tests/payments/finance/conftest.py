import pytest
from django.test import Client


@pytest.fixture
def customer_http(customer) -> Client:
    """A logged-in customer with no staff role, in a browser of their own."""
    browser = Client()
    browser.force_login(customer)
    return browser


@pytest.fixture
def anonymous_http() -> Client:
    return Client()
