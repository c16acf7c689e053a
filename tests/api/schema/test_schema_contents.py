"""The served schema is as tight as the server (issue 23): enums for the closed vocabularies,
formats and patterns, bounds the server enforces, every answer code an operation really
gives, links between operations, and the catalogue's models as examples."""

import json
import re

import pytest
from django.test import Client

from api.webhooks.models import DeliveryStatus
from payments.chain.networks import ASSET_SYMBOLS, NETWORK_KEYS
from payments.crypto.forms import MAX_TOP_UP_USD
from payments.crypto.selectors.state import PaymentState
from payments.models import WithdrawalStatus
from rental.models import Duration, ExtensionStatus, GpuModel, OrderStatus, Preparation

from .conftest import row_counts

WRITES = {"post", "put", "patch"}


@pytest.fixture
def served(db, catalogue) -> dict:
    response = Client().get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    return json.loads(response.content)


def _component(schema: dict, name: str) -> dict:
    return schema["components"]["schemas"][name]


def _resolved(schema: dict, node: dict) -> dict:
    """A property's schema with its $ref / allOf / oneOf of one enum followed."""
    for key in ("allOf", "oneOf"):
        if key in node:
            parts = [_resolved(schema, part) for part in node[key]]
            return {"enum": [v for part in parts for v in part.get("enum", [])]}
    if "$ref" in node:
        return _component(schema, node["$ref"].rsplit("/", 1)[-1])
    return node


def _property(schema: dict, component: str, name: str) -> dict:
    return _resolved(schema, _component(schema, component)["properties"][name])


def _operations(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def test_closed_vocabularies_are_enums(served):
    enum = {
        ("Order", "status"): OrderStatus.values,
        ("OrderSummary", "status"): OrderStatus.values,
        ("Order", "preparation"): Preparation.values,
        ("OrderCreateRequestRequest", "preparation"): Preparation.values,
        ("OrderCreateRequestRequest", "duration_days"): Duration.values,
        ("Payment", "status"): PaymentState.values,
        ("Payment", "network"): list(NETWORK_KEYS),
        ("Payment", "asset"): list(ASSET_SYMBOLS),
        ("TopUpRequestRequest", "network"): list(NETWORK_KEYS),
        ("TopUpRequestRequest", "asset"): list(ASSET_SYMBOLS),
        ("StablecoinRequestRequest", "network"): list(NETWORK_KEYS),
        ("Delivery", "status"): DeliveryStatus.values,
    }
    for (component, name), values in enum.items():
        assert _property(served, component, name)["enum"] == values, (component, name)
    # Statuses of resources served by other parts of the API, once they are served: the
    # same vocabulary as the models, under one component name each.
    for component, choices in (
        ("WithdrawalStatusEnum", WithdrawalStatus),
        ("ExtensionStatusEnum", ExtensionStatus),
    ):
        if component in served["components"]["schemas"]:
            assert _component(served, component)["enum"] == choices.values


def test_gpu_models_are_the_live_catalogues_slugs_as_examples_not_an_enum(served, catalogue):
    GpuModel.objects.create(
        slug="rtx6000-96gb", name="RTX PRO 6000", vendor="NVIDIA", memory_gb_per_card=96
    )
    schema = json.loads(Client().get("/api/v1/schema/?format=json").content)

    for component in ("OrderCreateRequestRequest", "ConfigurationRequest", "Order"):
        field = _property(schema, component, "gpu_model")
        assert "enum" not in field
        assert field["type"] == "string"
        assert "rtx6000-96gb" in field["examples"]
        assert {model.slug for model in catalogue.values()} <= set(field["examples"])


def test_formats_and_patterns(served):
    assert _property(served, "EndpointWriteRequest", "url")["format"] == "uri"
    assert _property(served, "PatchedEndpointUpdateRequest", "url")["format"] == "uri"
    for component, name in (("Order", "created_at"), ("Payment", "expires_at")):
        assert _property(served, component, name)["format"] == "date-time"
    address = re.compile(_property(served, "Payment", "deposit_address")["pattern"])
    assert address.fullmatch("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")
    assert not address.fullmatch("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe")
    tx_hash = re.compile(_property(served, "Transfer", "tx_hash")["pattern"])
    assert tx_hash.fullmatch("0x" + "ab" * 32) and not tx_hash.fullmatch("ab" * 32)
    lots = _property(served, "OrderCreateRequestRequest", "lots")
    assert (lots["minimum"], lots["maximum"]) == (1, 10)


def test_usd_amounts_have_no_sign_and_the_top_ups_maximum(served):
    amount = re.compile(_property(served, "TopUpRequestRequest", "amount")["pattern"])
    assert amount.fullmatch("50.00") and amount.fullmatch("5")
    assert amount.fullmatch(f"{MAX_TOP_UP_USD:.2f}")
    for refused in ("-5.00", f"{MAX_TOP_UP_USD + 1:.2f}", "100000.01", "1.234", "", "٣"):
        assert not amount.fullmatch(refused), refused
    for component, name in (("Order", "total_usd"), ("Balance", "balance_usd")):
        pattern = re.compile(_property(served, component, name)["pattern"])
        assert pattern.fullmatch("893.76") and not pattern.fullmatch("-893.76")
    # A statement's debits are negative, and say so.
    signed = re.compile(_property(served, "StatementEntry", "amount_usd")["pattern"])
    assert signed.fullmatch("-25.00")


def test_the_server_refuses_a_top_up_above_the_maximum(api_world):
    client = Client()
    before = row_counts()

    response = client.post(
        "/api/v1/top-ups/",
        data=json.dumps({"network": "local", "asset": "tUSDC", "amount": "100000.01"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_world.token}",
    )

    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["amount"]
    assert row_counts() == before


def test_every_operation_documents_its_problem_answers(served):
    for path, method, operation in _operations(served):
        documented = set(operation["responses"])
        expected = {"401", "403", "406", "429"}
        if "{" in path:
            expected.add("404")
        if method in WRITES:
            expected |= {"400", "409", "415"}
        if method in {"post", "put"}:
            expected.add("422")
        assert expected <= documented, (method, path, expected - documented)
        for status in documented - {"200", "201", "202", "204"}:
            content = operation["responses"][status]["content"]
            assert content == {
                "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
            }, (method, path, status)


def _url(path: str, world) -> str:
    return re.sub(r"{([^}]+)}", lambda m: str(world.path_value(m.group(1))), path)


def test_406_and_415_really_occur_on_every_operation(api_world, served):
    client = Client()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {api_world.token}"}
    before = row_counts()
    for path, method, _operation in _operations(served):
        send = getattr(client, method)
        url = _url(path, api_world)
        refused = send(url, HTTP_ACCEPT="text/html", **auth)
        assert refused.status_code == 406, (method, path, refused.content[:200])
        assert refused["Content-Type"] == "application/problem+json"
        if method in WRITES:
            refused = send(
                url,
                data="gpu_model=h100",
                content_type="text/plain",
                HTTP_IDEMPOTENCY_KEY="k",
                **auth,
            )
            assert refused.status_code == 415, (method, path, refused.content[:200])
            assert refused["Content-Type"] == "application/problem+json"
    assert row_counts() == before


def test_links_follow_the_path_parameters(served):
    links = {
        operation["operationId"]: {
            name: link["parameters"]
            for response in operation["responses"].values()
            for name, link in response.get("links", {}).items()
        }
        for _path, _method, operation in _operations(served)
    }
    created = links["orders_create"]
    for target in (
        "orders_retrieve",
        "orders_cancel",
        "orders_pay_balance",
        "orders_payments_create",
    ):
        assert created[target] == {"order_id": "$response.body#/id"}
    assert links["orders_payments_create"]["payments_declare"] == {
        "payment_id": "$response.body#/id"
    }
    assert links["webhook_deliveries_list"]["webhook_deliveries_redeliver"] == {
        "delivery_id": "$response.body#/results/0/id"
    }
    # Every `{..._id}` of every operation, ours and any added later, is fed by some answer.
    fed = {
        (target, name)
        for targets in links.values()
        for target, parameters in targets.items()
        for name, value in parameters.items()
        if value.startswith("$response")
    }
    for path, _method, operation in _operations(served):
        for name in re.findall(r"{([^}]+_id)}", path):
            assert (operation["operationId"], name) in fed, (operation["operationId"], name)
