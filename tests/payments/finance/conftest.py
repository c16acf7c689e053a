import pytest
from django.test import Client

# The watcher's fixtures on the local chain (anvil), and the chain-less ones that write
# transfers with the ORM, for the reconciliation of the money.
from tests.payments.crypto_ui.conftest import local_network, transfer  # noqa: F401
from tests.payments.watcher.conftest import order_payment, pay, scan  # noqa: F401


@pytest.fixture
def customer_http(customer) -> Client:
    """A logged-in customer with no staff role, in a browser of their own."""
    browser = Client()
    browser.force_login(customer)
    return browser


@pytest.fixture
def anonymous_http() -> Client:
    return Client()
