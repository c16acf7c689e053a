"""Contract checks: a response's body against the generated OpenAPI schema.

`assert_matches_schema(response, "get", "/api/v1/orders/{order_id}/")` finds the operation and
the response documented for the response's status and content type, validates the body with
jsonschema (the schema is OpenAPI 3.1, so its schemas are JSON Schema 2020-12), and also fails
on a property the schema does not document (drift between a view and its schema).
"""

import json
from functools import lru_cache

import jsonschema
from drf_spectacular.generators import SchemaGenerator


@lru_cache(maxsize=1)
def openapi_schema() -> dict:
    """The schema the API serves (generated once per test process)."""
    return json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))


def _resolve(schema: dict, root: dict) -> dict:
    while "$ref" in schema:
        node = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _undocumented(instance, schema: dict, root: dict, where: str) -> list[str]:
    """Properties present in `instance` that the (resolved) schema does not list."""
    schema = _resolve(schema, root)
    found = []
    for key in ("allOf", "oneOf", "anyOf"):
        if key in schema and isinstance(instance, dict):
            known = set()
            for part in schema[key]:
                known |= set(_resolve(part, root).get("properties", {}))
            if key == "allOf" and "additionalProperties" not in schema:
                found += [f"{where}.{name}" for name in instance if name not in known]
            return found
    if isinstance(instance, dict) and "properties" in schema:
        properties = schema["properties"]
        if schema.get("additionalProperties") in (None, False):
            found += [f"{where}.{name}" for name in instance if name not in properties]
        for name, value in instance.items():
            if name in properties:
                found += _undocumented(value, properties[name], root, f"{where}.{name}")
    elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for index, value in enumerate(instance):
            found += _undocumented(value, schema["items"], root, f"{where}[{index}]")
    return found


def response_schema(method: str, path_template: str, status: int, content_type: str) -> dict:
    document = openapi_schema()
    paths = document["paths"]
    assert path_template in paths, f"{path_template} is not in the schema: {sorted(paths)}"
    operation = paths[path_template].get(method.lower())
    assert operation is not None, f"{method.upper()} {path_template} is not in the schema"
    responses = operation["responses"]
    documented = responses.get(str(status)) or responses.get("default")
    assert documented is not None, (
        f"{method.upper()} {path_template} does not document status {status}: {sorted(responses)}"
    )
    content = documented.get("content", {})
    assert content_type in content, (
        f"{method.upper()} {path_template} {status} documents {sorted(content)}, not {content_type}"
    )
    return content[content_type].get("schema", {})


def assert_matches_schema(response, method: str, path_template: str):
    """The response's JSON body, after checking it against the schema; returns the body."""
    content_type = response["Content-Type"].split(";")[0].strip()
    body = json.loads(response.content)
    schema = response_schema(method, path_template, response.status_code, content_type)
    root = openapi_schema()
    validator = jsonschema.Draft202012Validator(
        {**schema, "components": root["components"]},
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )
    errors = sorted(validator.iter_errors(body), key=lambda error: list(error.path))
    assert not errors, "\n".join(f"{list(error.path)}: {error.message}" for error in errors[:10])
    extra = _undocumented(body, schema, root, "$")
    assert not extra, f"undocumented properties: {extra}"
    return body
