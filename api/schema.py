"""OpenAPI: the Bearer security scheme, the Problem component, and the problem responses and
`Idempotency-Key` header every operation of ours has (a postprocessing hook, so no view can
forget them)."""

from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension

from .problems import PROBLEM_CONTENT_TYPE

SECURITY_SCHEME = "bearerAuth"

FIELD_ERROR_SCHEMA = {
    "type": "object",
    "required": ["field", "message"],
    "properties": {
        "field": {"type": "string", "description": 'The field, or "" for the whole request.'},
        "message": {"type": "string"},
    },
    "additionalProperties": False,
}

PROBLEM_SCHEMA = {
    "type": "object",
    "description": "RFC 9457 problem details.",
    "required": ["type", "title", "status", "detail", "instance"],
    "properties": {
        "type": {"type": "string", "format": "uri"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"},
        "errors": {"type": "array", "items": {"$ref": "#/components/schemas/FieldError"}},
    },
    "additionalProperties": False,
}

COMPONENTS = {"schemas": {"Problem": PROBLEM_SCHEMA, "FieldError": FIELD_ERROR_SCHEMA}}

_DESCRIPTIONS = {
    "400": _("Invalid input: the problem lists each field's error."),
    "401": _("No token, or a malformed, unknown, revoked or expired one."),
    "403": _("The token lacks the scope this operation needs."),
    "404": _("No such object in your account."),
    "406": _("The Accept header asks for something other than JSON."),
    "409": _("The object's state refuses this, or the Idempotency-Key is in use."),
    "415": _("The body is not JSON (send Content-Type: application/json)."),
    "422": _("The Idempotency-Key was used with another request."),
    "429": _("Rate limit reached: retry after the Retry-After header's seconds."),
}
_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}


def _idempotency_parameter() -> dict:
    return {
        "in": "header",
        "name": "Idempotency-Key",
        "required": False,
        "schema": {"type": "string", "minLength": 1, "maxLength": 255},
        "description": str(
            _(
                "Any 1 to 255 printable ASCII characters. The same key with the same body "
                "replays the first response for 24 hours; with another body it answers 422."
            )
        ),
    }


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.BearerTokenAuthentication"
    name = SECURITY_SCHEME

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "gr_<prefix>_<secret>",
            "description": str(_("An API token created on your account page.")),
        }


def _problem_response(status: str) -> dict:
    response = {
        "description": str(_DESCRIPTIONS[status]),
        "content": {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }
    if status in {"409", "429"}:
        response["headers"] = _RETRY_AFTER
    return response


def _statuses(path: str, method: str, operation: dict) -> list[str]:
    """What an operation can answer besides its own successes, as the server really does:
    401/403/429 behind a token, 404 for an object in the path, 406 for an Accept that is not
    JSON (DRF's negotiation, every operation), 400/409/415 for a write (the body, the state,
    its Content-Type) and 422 where an Idempotency-Key applies (POST, PUT), 400 for an
    operation with query or header parameters."""
    statuses = ["406"]
    if operation.get("security") != [{}] and operation.get("security", True):
        statuses += ["401", "403", "429"]
    if "{" in path:
        statuses.append("404")
    if method in {"post", "put", "patch"}:
        statuses += ["400", "409", "415"]
        if method in {"post", "put"}:
            statuses.append("422")
    elif method == "delete":
        statuses.append("409")
    if any(p.get("in") in {"query", "header"} for p in operation.get("parameters", [])):
        statuses.append("400")
    return statuses


def _as_problem_content(status: str, response: dict) -> None:
    """An error response declared as JSON is served as problem+json: say so."""
    content = response.get("content", {})
    if status[:1] in {"4", "5"} and "application/json" in content:
        content.setdefault(PROBLEM_CONTENT_TYPE, content.pop("application/json"))


def add_problem_responses(result, generator, request, public):
    """SPECTACULAR_SETTINGS POSTPROCESSING_HOOKS: the problem responses and the POSTs'
    Idempotency-Key header, wherever a view has not declared them itself; the Problem and
    FieldError components (replacing any serializer's of those names)."""
    result.setdefault("components", {}).setdefault("schemas", {}).update(COMPONENTS["schemas"])
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            responses = operation.setdefault("responses", {})
            for status, response in responses.items():
                _as_problem_content(status, response)
            for status in _statuses(path, method, operation):
                responses.setdefault(status, _problem_response(status))
            if method in {"post", "put"}:
                parameters = operation.setdefault("parameters", [])
                if not any(p.get("name") == "Idempotency-Key" for p in parameters):
                    parameters.append(_idempotency_parameter())
    return result
