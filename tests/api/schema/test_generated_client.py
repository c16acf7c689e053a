"""A typed client generated from the served schema (openapi-python-client, into a temporary
folder, no network, no post-hooks) places an order and pays it from the balance against a live
server, with the generated client's own models: what a customer's script generated from
/api/v1/schema/ does."""

import importlib
import json
import subprocess
import sys
import urllib.request
import uuid
from decimal import Decimal
from pathlib import Path

import pytest

from rental.models import Order, OrderStatus

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "gpu_rental_client"
BINARY_TYPES = ("application/zip", "application/pdf")


@pytest.fixture
def generated_client(live_server, tmp_path, monkeypatch):
    """The package generated from the schema the live server serves, importable."""
    with urllib.request.urlopen(live_server.url + "/api/v1/schema/?format=json") as answer:
        (tmp_path / "schema.json").write_bytes(answer.read())
    # The kits (application/zip) and receipts (application/pdf) are documented as what they
    # are; the generator reads only application/octet-stream as bytes, and its own
    # content_type_overrides is how a script tells it these are bytes too.
    config = {
        "post_hooks": [],
        "package_name_override": PACKAGE,
        "content_type_overrides": dict.fromkeys(BINARY_TYPES, "application/octet-stream"),
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(tmp_path / "schema.json"),
            "--config",
            str(tmp_path / "config.json"),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / PACKAGE),
            "--fail-on-warning",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
        del sys.modules[name]
    yield importlib.import_module(PACKAGE)
    for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
        del sys.modules[name]


@pytest.mark.django_db(transaction=True)
def test_a_generated_client_places_an_order_and_pays_it_from_the_balance(
    generated_client, live_server, api_world
):
    from gpu_rental_client.api.balance import balance_retrieve
    from gpu_rental_client.api.orders import orders_create, orders_pay_balance, orders_retrieve
    from gpu_rental_client.models import (
        Balance,
        DurationDaysEnum,
        OrderCreateRequestRequest,
        OrderStatusEnum,
        PreparationEnum,
        Problem,
    )
    from gpu_rental_client.models import (
        Order as ClientOrder,
    )

    client = generated_client.AuthenticatedClient(
        base_url=live_server.url, token=api_world.token, raise_on_unexpected_status=True
    )
    before = balance_retrieve.sync(client=client)
    assert isinstance(before, Balance)

    placed = orders_create.sync(
        client=client,
        body=OrderCreateRequestRequest(
            gpu_model="h100-80gb",
            duration_days=DurationDaysEnum.VALUE_7,
            lots=1,
            preparation=PreparationEnum.PYTORCH,
        ),
        idempotency_key=str(uuid.uuid4()),
    )
    assert isinstance(placed, ClientOrder), placed
    assert placed.status == OrderStatusEnum.AWAITING_PAYMENT
    assert placed.duration_days == 7 and placed.lots == 1

    paid = orders_pay_balance.sync(placed.id, client=client, idempotency_key=str(uuid.uuid4()))
    assert isinstance(paid, ClientOrder), paid
    assert paid.status in {OrderStatusEnum.PAID, OrderStatusEnum.PROVISIONING}

    stored = Order.objects.get(pk=placed.id)
    assert stored.customer == api_world.customer
    assert stored.status in {OrderStatus.PAID, OrderStatus.PROVISIONING}
    after = balance_retrieve.sync(client=client)
    assert Decimal(after.balance_usd) == Decimal(before.balance_usd) - Decimal(placed.total_usd)
    assert orders_retrieve.sync(placed.id, client=client).status == paid.status

    # A refusal comes back as the client's Problem model, with the server's status.
    missing = orders_retrieve.sync(2**62, client=client)
    assert isinstance(missing, Problem) and missing.status == 404
