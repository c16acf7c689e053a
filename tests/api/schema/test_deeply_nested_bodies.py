"""Issue 23, F2: a JSON body nested ~2,000 deep answered 500 on every JSON write (DRF's JSON
parser raised RecursionError, and so did api.idempotency.request_hash, which caught only
ValueError). Every write of the served schema, with and without an Idempotency-Key, now
answers a 400 problem that says why, and changes nothing; so does the pilot kit's report
upload, the pages' one JSON endpoint."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from payments.crypto.services.balance_payment import balance_pay_order
from pilot.services.tokens import kit_token_issue
from rental.models import Order
from tests.api.contract import openapi_schema

from .conftest import NO_SUCH_ID, row_counts

WRITES = {"post", "put", "patch", "delete"}
DEEP = ("[" * 2000 + "]" * 2000).encode()
DEEP_OBJECT = ('{"a":' * 2000 + "1" + "}" * 2000).encode()


def _writes(with_body: bool) -> list[tuple[str, str]]:
    return [
        (method, path)
        for path, operations in openapi_schema()["paths"].items()
        for method, operation in operations.items()
        if method in WRITES and ("requestBody" in operation) == with_body
    ]


def _url(path: str, values) -> str:
    for name, value in values.items():
        path = path.replace("{" + name + "}", str(value))
    return path


def _path_names(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]


def _send(world, method, path, body, key):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {world.token}"}
    if key:
        headers["HTTP_IDEMPOTENCY_KEY"] = key
    send = getattr(Client(), method)
    return send(path, data=body, content_type="application/json", **headers)


def test_the_schema_has_writes_with_bodies():
    assert len(_writes(with_body=True)) >= 8  # the walk below is not empty


@pytest.mark.parametrize("key", [None, "deep-1"], ids=["no-key", "idempotency-key"])
@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["lists", "objects"])
@pytest.mark.parametrize(("method", "path"), _writes(with_body=True))
def test_a_deeply_nested_body_is_a_400_problem_and_changes_nothing(
    api_world, method, path, body, key
):
    names = _path_names(path)
    url = _url(path, {name: api_world.path_value(name) for name in names})
    before = row_counts()

    response = _send(api_world, method, url, body, key)

    assert response["Content-Type"] == "application/problem+json", response.content[:300]
    problem = json.loads(response.content)
    if all(name in api_world.ids for name in names):
        assert response.status_code == 400, problem
        assert problem["type"].endswith("/malformed")
        assert "nested" in problem["detail"], problem
    else:  # a parameter this test holds no object for: its 404 may come first
        assert response.status_code in {400, 404}, problem
    assert row_counts() == before


@pytest.mark.parametrize(("method", "path"), _writes(with_body=False))
def test_a_write_without_a_body_is_not_a_500_with_a_deep_body_and_a_key(api_world, method, path):
    # The Idempotency-Key hashes the body before the view runs (where the 500 was).
    names = _path_names(path)
    url = _url(path, dict.fromkeys(names, NO_SUCH_ID))
    operation = openapi_schema()["paths"][path][method]
    before = row_counts()

    response = _send(api_world, method, url, DEEP, "deep-2")

    assert response.status_code < 500, response.content[:300]
    assert str(response.status_code) in operation["responses"], response.content[:300]
    if names:  # on an id no row has: refused, and nothing changed
        assert response.status_code in {400, 404}, response.content[:300]
        assert response["Content-Type"] == "application/problem+json"
        assert row_counts() == before
    else:
        # Nothing to 404 on (DELETE account/ssh-key/): an operation that documents neither a
        # body nor an Idempotency-Key reads neither (a DELETE's content has no defined
        # meaning, RFC 9110 9.3.5), so it answers as it would without them: its documented
        # success, or a problem.
        headers = {p["name"] for p in operation.get("parameters", []) if p["in"] == "header"}
        assert "Idempotency-Key" not in headers
        assert response.status_code < 300 or (
            response["Content-Type"] == "application/problem+json"
        ), response.content[:300]


def test_a_body_nested_beyond_the_limit_but_parseable_is_refused_too(api_world):
    """Not only what overflows Python's recursion: the API reads objects a few levels deep."""
    body = ('{"gpu_model":' * 40 + '"x"' + "}" * 40).encode()

    response = _send(api_world, "post", "/api/v1/orders/", body, None)

    assert response.status_code == 400
    assert "nested" in response.json()["detail"]


def test_the_pilot_kits_report_upload_refuses_a_deep_body(
    customer, catalogue, place_order, credit, django_capture_on_commit_callbacks
):
    credit(customer, "5000.00")
    order = place_order(customer, catalogue["h100"])
    with django_capture_on_commit_callbacks(execute=True):
        balance_pay_order(order_id=order.pk, customer=customer)
    token = kit_token_issue(order=Order.objects.get(pk=order.pk))
    before = row_counts()

    response = Client().post(
        reverse("pilot:report_upload_api", kwargs={"order_id": order.pk}),
        data=DEEP,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )

    assert response.status_code == 400, response.content[:300]
    assert "nested" in response.json()["error"]
    assert row_counts() == before
