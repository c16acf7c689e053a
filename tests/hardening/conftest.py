import pytest
from django.contrib.auth.models import Group
from django.test import Client

from tests.mfa_fixtures import enrol_totp

# The local network enabled by settings alone (no chain is called), for the top-up form, and
# payments holding money for the finance console's page of them.
from tests.payments.crypto_ui.conftest import local_network, transfer  # noqa: F401
from tests.payments.finance.test_unallocated_views import holdings, top_up  # noqa: F401


@pytest.fixture
def operator_client(make_customer) -> Client:
    operator = make_customer(email="ops@example.com", first_name="Otto", last_name="Perator")
    operator.groups.add(Group.objects.get_or_create(name="operators")[0])
    enrol_totp(operator)
    browser = Client()
    browser.force_login(operator)
    return browser
