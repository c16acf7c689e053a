"""The schema hooks on operations nobody wrote links or patterns for: what another part of the
API adds later gets them by convention."""

from decimal import Decimal

import pytest

from api.schema_fields import usd_pattern
from api.schema_links import add_links


def _json(component: str) -> dict:
    return {
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{component}"}}}
    }


def test_a_new_resource_gets_links_from_its_path_parameters():
    schema = {
        "components": {
            "schemas": {
                "Extension": {"properties": {"id": {"type": "integer"}}},
                "PaginatedExtensionList": {
                    "properties": {
                        "results": {
                            "type": "array",
                            "items": {"$ref": "#/components/schemas/Extension"},
                        }
                    }
                },
            }
        },
        "paths": {
            "/api/v1/orders/{order_id}/extensions/": {
                "get": {
                    "operationId": "extensions_list",
                    "responses": {"200": _json("PaginatedExtensionList")},
                },
                "post": {
                    "operationId": "extensions_create",
                    "responses": {"201": _json("Extension")},
                },
            },
            "/api/v1/orders/{order_id}/extensions/{extension_id}/pay/": {
                "post": {
                    "operationId": "extensions_pay",
                    "responses": {"200": _json("Extension"), "409": {}},
                },
            },
        },
    }

    add_links(schema, None, None, True)

    paths = schema["paths"]
    created = paths["/api/v1/orders/{order_id}/extensions/"]["post"]["responses"]["201"]
    assert created["links"]["extensions_pay"]["parameters"] == {
        "order_id": "$request.path.order_id",
        "extension_id": "$response.body#/id",
    }
    listed = paths["/api/v1/orders/{order_id}/extensions/"]["get"]["responses"]["200"]
    assert listed["links"]["extensions_pay"]["parameters"]["extension_id"] == (
        "$response.body#/results/0/id"
    )
    # No link to itself, none from an error, none where no parameter comes from the answer.
    paid = paths["/api/v1/orders/{order_id}/extensions/{extension_id}/pay/"]["post"]["responses"]
    assert "links" not in paid["200"] and "links" not in paid["409"]


def test_usd_patterns():
    import re

    top_up = re.compile(usd_pattern(max_value=Decimal("100000.00")))
    assert [bool(top_up.fullmatch(v)) for v in ("0.01", "99999.99", "100000", "100000.00")] == [
        True
    ] * 4
    assert not any(top_up.fullmatch(v) for v in ("100000.01", "100001", "-1", "1.001", "1e3"))
    assert re.fullmatch(usd_pattern(signed=True), "-25.00")
    with pytest.raises(ValueError):
        usd_pattern(max_value=Decimal("250.00"))  # only a power of ten fits a pattern exactly
