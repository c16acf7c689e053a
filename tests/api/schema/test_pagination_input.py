"""Issue 23, F4: a tampered cursor answered an undocumented 404, and `page_size=abc`, `-5`,
`1.5` or `٣` were silently read as the default. On every paginated list of the served schema
both are now a 400 problem naming the parameter, documented in the schema with the bounds."""

import json

import pytest
from django.test import Client

from api.pagination import MAX_PAGE_SIZE
from tests.api.contract import assert_matches_schema, openapi_schema

from .conftest import row_counts

BAD_PAGE_SIZES = ["abc", "-5", "1.5", "٣", "0", str(MAX_PAGE_SIZE + 1), "", " 5", "1e2"]
BAD_CURSORS = ["not-a-cursor", "cD0yMDI2", "%00", "x" * 300]


def _paginated() -> list[str]:
    found = []
    for path, operations in openapi_schema()["paths"].items():
        names = {p["name"] for p in operations.get("get", {}).get("parameters", [])}
        if {"cursor", "page_size"} <= names:
            found.append(path)
    return found


def _get(world, path: str, query: dict):
    url = path
    for name in ("order_id", "payment_id", "endpoint_id"):
        url = url.replace("{" + name + "}", str(world.path_value(name)))
    return Client().get(url, query, HTTP_AUTHORIZATION=f"Bearer {world.token}")


def _field_errors(response) -> dict:
    assert response["Content-Type"] == "application/problem+json", response.content[:300]
    body = json.loads(response.content)
    return {error["field"]: error["message"] for error in body["errors"]}


def test_the_schema_has_paginated_lists():
    assert {"/api/v1/orders/", "/api/v1/balance/statement/"} <= set(_paginated())


@pytest.mark.parametrize("path", _paginated())
@pytest.mark.parametrize("size", BAD_PAGE_SIZES)
def test_a_bad_page_size_is_a_400_problem(api_world, path, size):
    before = row_counts()

    response = _get(api_world, path, {"page_size": size})

    assert response.status_code == 400, response.content[:300]
    errors = _field_errors(response)
    assert set(errors) == {"page_size"}
    assert f"1 to {MAX_PAGE_SIZE}" in errors["page_size"]
    assert_matches_schema(response, "get", path)
    assert row_counts() == before


@pytest.mark.parametrize("path", _paginated())
@pytest.mark.parametrize("cursor", BAD_CURSORS)
def test_a_bad_cursor_is_a_400_problem(api_world, path, cursor):
    response = _get(api_world, path, {"cursor": cursor})

    assert response.status_code == 400, response.content[:300]
    assert set(_field_errors(response)) == {"cursor"}
    assert_matches_schema(response, "get", path)


@pytest.mark.parametrize("path", _paginated())
def test_good_page_sizes_and_the_next_cursor_still_work(api_world, path):
    for size in ("1", str(MAX_PAGE_SIZE)):
        response = _get(api_world, path, {"page_size": size})
        assert response.status_code == 200, response.content[:300]
        assert len(response.json()["results"]) <= int(size)
    first = _get(api_world, "/api/v1/orders/", {"page_size": "1"}).json()
    assert len(first["results"]) == 1 and first["next"]  # the world has two orders
    following = Client().get(first["next"], HTTP_AUTHORIZATION=f"Bearer {api_world.token}")
    assert following.status_code == 200
    assert following.json()["results"][0]["id"] != first["results"][0]["id"]


@pytest.mark.parametrize("path", _paginated())
def test_the_schema_documents_the_bounds_and_the_400(path):
    operation = openapi_schema()["paths"][path]["get"]
    parameters = {p["name"]: p for p in operation["parameters"]}
    assert parameters["page_size"]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_PAGE_SIZE,
        "default": 50,
    }
    assert parameters["cursor"]["schema"]["type"] == "string"
    assert "400" in operation["responses"]
