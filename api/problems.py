"""RFC 9457 problem details for every error under /api/: DRF's exceptions, our services'
domain errors, a body over Django's upload limit, and Django's own 400, 404 and 500
(config/urls.py points handler400/404/500 here).

{"type", "title", "status", "detail", "instance"} and, for invalid input,
"errors": [{"field", "message"}]. Content-Type application/problem+json.
"""

import json
import math

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpResponse
from django.utils.translation import gettext as _
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response

from payments.exceptions import PaymentError
from pilot.exceptions import PilotError
from rental.exceptions import (
    ModelUnavailable,
    PriceUnavailable,
    RentalError,
)

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_BASE = "https://gpu-rental.invalid/problems/"
API_PATH_PREFIX = "/api/"
# Domain errors that say the input was wrong (400); every other one is a state conflict (409).
BAD_INPUT_ERRORS = (ModelUnavailable, PriceUnavailable)


def problem_type(slug: str | None) -> str:
    return PROBLEM_BASE + slug if slug else "about:blank"


def problem_body(
    status_code: int, title, detail, type_slug: str | None, instance: str, errors=None
) -> dict:
    body = {
        "type": problem_type(type_slug),
        "title": str(title),
        "status": status_code,
        "detail": str(detail),
        "instance": instance,
    }
    if errors is not None:
        body["errors"] = [
            {"field": error["field"], "message": str(error["message"])} for error in errors
        ]
    return body


class Problem(exceptions.APIException):
    """Raise from a view to answer with a problem; `errors` are [{"field", "message"}]."""

    def __init__(
        self,
        status_code: int,
        title,
        detail,
        type_slug: str | None,
        errors=None,
        headers: dict | None = None,
    ):
        self.status_code = status_code
        self.title = title
        self.type_slug = type_slug
        self.errors = errors
        self.headers = headers or {}
        super().__init__(detail=str(detail))


def problem(status_code: int, title, detail, type_slug: str | None, errors=None) -> Problem:
    """The exception for a problem, to raise: `raise problem(409, _("…"), msg, "conflict")`."""
    return Problem(status_code, title, detail, type_slug, errors)


def validation_problem(errors, detail=None) -> Problem:
    return Problem(
        400,
        _("Invalid request"),
        detail or _("Some fields are not valid; each is listed in “errors”."),
        "validation",
        errors,
    )


def form_errors(form) -> list[dict]:
    """A Django form's errors as problem field errors (non-field errors under "")."""
    return [
        {"field": "" if field == "__all__" else field, "message": message}
        for field, messages in form.errors.items()
        for message in messages
    ]


def flatten_errors(detail, prefix: str = "") -> list[dict]:
    """DRF's nested error detail as [{"field": "a.b[0]", "message": …}]."""
    if isinstance(detail, dict):
        errors = []
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            errors.extend(flatten_errors(value, name))
        return errors
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [{"field": prefix, "message": str(item)} for item in detail]
        errors = []
        for index, value in enumerate(detail):
            errors.extend(flatten_errors(value, f"{prefix}[{index}]"))
        return errors
    return [{"field": prefix, "message": str(detail)}]


def _detail_text(detail) -> str:
    if isinstance(detail, (list, dict)):
        flat = flatten_errors(detail)
        return " ".join(error["message"] for error in flat)
    return str(detail)


def _problem_for_api_exception(exc: exceptions.APIException) -> Problem:
    code = exc.status_code
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, exceptions.ValidationError):
        return validation_problem(flatten_errors(exc.detail))
    if isinstance(exc, exceptions.ParseError):
        return Problem(400, _("Malformed request body"), _detail_text(exc.detail), "malformed")
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        if isinstance(exc, exceptions.NotAuthenticated):
            detail = _(
                "This endpoint needs an API token, sent as “Authorization: Bearer <token>”. "
                "Create one on your account page."
            )
        else:
            detail = _detail_text(exc.detail)
        return Problem(code, _("Not authenticated"), detail, "not-authenticated")
    if isinstance(exc, exceptions.PermissionDenied):
        return Problem(code, _("Permission denied"), _detail_text(exc.detail), "forbidden")
    if isinstance(exc, exceptions.NotFound):
        detail = exc.detail if exc.detail != exceptions.NotFound.default_detail else None
        return Problem(
            404, _("Not found"), detail or _("Nothing is found at this address."), "not-found"
        )
    if isinstance(exc, exceptions.MethodNotAllowed):
        return Problem(
            405,
            _("Method not allowed"),
            _("This endpoint does not accept %(method)s.") % {"method": exc.args[0]}
            if exc.args
            else _detail_text(exc.detail),
            "method-not-allowed",
        )
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return Problem(
            415,
            _("Unsupported media type"),
            _("Send the request body as JSON, with “Content-Type: application/json”."),
            "unsupported-media-type",
        )
    if isinstance(exc, exceptions.NotAcceptable):
        return Problem(
            406, _("Not acceptable"), _("This API answers in JSON only."), "not-acceptable"
        )
    if isinstance(exc, exceptions.Throttled):
        wait = max(1, math.ceil(exc.wait or 1))
        return Problem(
            429,
            _("Too many requests"),
            _("This token sent too many requests. Try again in %(seconds)d seconds.")
            % {"seconds": wait},
            "rate-limited",
            headers={"Retry-After": str(wait)},
        )
    return Problem(code, _("Request refused"), _detail_text(exc.detail), None)


def _problem_for_domain_error(exc) -> Problem | None:
    if isinstance(exc, PilotError):
        return Problem(exc.status, _("Request refused"), exc.message, "pilot")
    if isinstance(exc, BAD_INPUT_ERRORS):
        return validation_problem([], detail=exc.message)
    if isinstance(exc, PaymentError):
        return Problem(409, _("Payment refused"), exc.message, "payment-conflict")
    if isinstance(exc, RentalError):
        return Problem(409, _("Request conflicts with the current state"), exc.message, "conflict")
    if isinstance(exc, DjangoValidationError):
        if hasattr(exc, "error_dict"):
            errors = [
                {"field": "" if field == "__all__" else field, "message": message}
                for field, messages in exc.message_dict.items()
                for message in messages
            ]
        else:
            errors = [{"field": "", "message": message} for message in exc.messages]
        return validation_problem(errors)
    return None


def too_large_problem() -> Problem:
    return Problem(
        400,
        _("Request too large"),
        _("The request body is larger than %(limit)d KiB.")
        % {"limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 1024},
        "too-large",
    )


def as_problem(exc) -> Problem | None:
    """The problem an exception is answered with, or None (an unexpected error: 500)."""
    if isinstance(exc, RequestDataTooBig):  # Django's limit, met reading the body
        return too_large_problem()
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    if isinstance(exc, exceptions.APIException):
        return _problem_for_api_exception(exc)
    return _problem_for_domain_error(exc)


def problem_response(found: Problem, instance: str) -> Response:
    body = problem_body(
        found.status_code, found.title, found.detail, found.type_slug, instance, found.errors
    )
    response = Response(body, status=found.status_code, content_type=PROBLEM_CONTENT_TYPE)
    for name, value in found.headers.items():
        response[name] = value
    return response


def exception_handler(exc, context):
    """REST_FRAMEWORK["EXCEPTION_HANDLER"]."""
    found = as_problem(exc)
    if found is None:
        return None  # Django's 500 handler (below) answers, as problem+json under /api/
    request = context.get("request")
    response = problem_response(found, request.path if request is not None else "")
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        response["WWW-Authenticate"] = auth_header
    return response


def _plain_problem(request, status_code: int, title, detail, slug: str) -> HttpResponse:
    body = problem_body(status_code, title, detail, slug, request.path)
    return HttpResponse(
        json.dumps(body, ensure_ascii=False),
        status=status_code,
        content_type=PROBLEM_CONTENT_TYPE,
    )


def bad_request(request, exception=None):
    """handler400: problem+json under /api/ (whatever Django refused before a view could
    answer), the site's page elsewhere."""
    if request.path.startswith(API_PATH_PREFIX):
        if isinstance(exception, RequestDataTooBig):
            found = too_large_problem()
            return _plain_problem(request, 400, found.title, found.detail, found.type_slug)
        return _plain_problem(
            request, 400, _("Bad request"), _("The request could not be read."), "bad-request"
        )
    return defaults.bad_request(request, exception)


def not_found(request, exception=None):
    """handler404: problem+json under /api/, the site's page elsewhere."""
    if request.path.startswith(API_PATH_PREFIX):
        return _plain_problem(
            request, 404, _("Not found"), _("Nothing is found at this address."), "not-found"
        )
    return defaults.page_not_found(request, exception)


def server_error(request):
    """handler500: problem+json under /api/, the site's page elsewhere."""
    if request.path.startswith(API_PATH_PREFIX):
        return _plain_problem(
            request,
            status.HTTP_500_INTERNAL_SERVER_ERROR,
            _("Server error"),
            _("Something went wrong on our side. Try again in a moment."),
            "server-error",
        )
    return defaults.server_error(request)


@csrf_exempt
def not_found_view(request, *args, **kwargs):
    """Every unknown address under /api/ (api/urls.py's last route), whatever the method: it
    does nothing, so a write needs no CSRF token to be told 404 (Django's HTML 403 answered
    before)."""
    return not_found(request)
