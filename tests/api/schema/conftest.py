"""A customer with something of every kind the API shows, made by the project's own services
(as the other API tests make them): a balance, an order awaiting payment with a crypto payment,
a second order and a webhook endpoint. Used by the tests that walk the whole schema."""

from dataclasses import dataclass

import pytest

from accounts.models import User
from api.models import Scope
from api.tokens import token_create
from api.webhooks.services.endpoints import endpoint_create
from payments.crypto.services.payments import payment_create_for_order
from tests.payments.crypto_ui.conftest import local_network  # noqa: F401 - a fixture

# Every scope there is, withdraw and tokens included: the tests that walk the whole schema
# exercise each operation past its scope check (the refusals are tested in tests/api/foundation).
ALL_SCOPES = tuple(Scope.values)
# An id no row has (bigint's range): an operation on it answers 404.
NO_SUCH_ID = 2**62


@dataclass
class ApiWorld:
    customer: User
    token: str
    ids: dict[str, int]

    def path_value(self, name: str) -> int:
        """The id of the customer's own object for a path parameter (`order_id`, ...); an id no
        row has for a parameter this world holds nothing for."""
        return self.ids.get(name, NO_SUCH_ID)


@pytest.fixture
def api_world(customer, catalogue, place_order, credit, local_network) -> ApiWorld:  # noqa: F811
    credit(customer, "5000.00")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=7)
    place_order(customer, catalogue["h100"], lots=1, duration_days=3)  # left to pay
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    endpoint = endpoint_create(owner=customer, url="http://127.0.0.1:9/hook", events=["order.paid"])
    token = token_create(owner=customer, name="schema tests", scopes=list(ALL_SCOPES)).raw
    return ApiWorld(
        customer=customer,
        token=token,
        ids={"order_id": order.pk, "payment_id": payment.pk, "endpoint_id": endpoint.pk},
    )


OUR_APPS = {"accounts", "rental", "payments", "pilot", "api", "webhooks", "outbox", "hosts"}


def row_counts() -> dict[str, int]:
    """Rows of every model of ours: a request that must change nothing leaves these equal."""
    from django.apps import apps

    return {
        model._meta.label: model._default_manager.count()
        for model in apps.get_models()
        if model._meta.app_label in OUR_APPS and not model._meta.proxy
    }
