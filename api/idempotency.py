"""`Idempotency-Key` on POST requests, as Stripe defines it.

The first request with a key claims it: a unique row (owner, key) inserted and committed on
its own before the view runs. Parallel requests with that key find the claim and get 409 with
`Retry-After: 1` while it runs. The view then runs in one transaction with the storing of its
response, so the result and the record of it commit together: the same key and the same body
(method + path + canonical JSON) replay that response (status, body, `Idempotent-Replayed:
true`); another body gets 422. A view that fails with a 5xx releases the claim, so a retry runs
again. A claim left by a dead process is taken over after API_IDEMPOTENCY_CLAIM_SECONDS. Keys
are scoped per token owner and purged after API_IDEMPOTENCY_KEY_HOURS (beat: api.tasks).

Each claim is its `claimed_at`: a request stores its response, or releases the key, only
where the row still holds its own claim. A request that ran longer than
API_IDEMPOTENCY_CLAIM_SECONDS and was taken over therefore finds no row: its transaction is
rolled back (nothing it did commits) and it answers 409 like a request in flight; the retry
replays the result of the request that took over. Keep API_IDEMPOTENCY_CLAIM_SECONDS (300)
well above the longest a request may run, the web worker's timeout (gunicorn --timeout,
30 s by default), so that a take-over only ever meets a dead request.
"""

import functools
import hashlib
import json
import logging
import re
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpResponse, RawPostDataException
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from .models import IdempotencyKey
from .problems import PROBLEM_CONTENT_TYPE, Problem, as_problem, problem_response

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_PATTERN = re.compile(r"[\x20-\x7e]{1,255}")
# Response headers kept with the response and replayed with it.
KEPT_HEADERS = ("Location",)

logger = logging.getLogger(__name__)


class _ClaimLost(Exception):
    """Our claim was taken over while the view ran: roll its work back."""


class _ViewFailed(Exception):
    """Carries a 5xx response out of the transaction so that it rolls back."""

    def __init__(self, response):
        self.response = response


def request_hash(request: Request) -> str:
    """SHA-256 of method, path (with the query) and the body as canonical JSON (keys sorted,
    no spaces); a body that is not JSON counts byte for byte."""
    try:
        body = request._request.body
    except RawPostDataException:  # already read by the parser: use what it read
        body = json.dumps(request.data, sort_keys=True, default=str).encode()
    try:
        canonical = json.dumps(
            json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    except (ValueError, UnicodeDecodeError, RecursionError):
        canonical = body  # the parser refuses it (400) before anything is claimed
    digest = hashlib.sha256()
    for part in (request.method.encode(), request.get_full_path().encode(), canonical):
        digest.update(part)
        digest.update(b"\0")
    return digest.hexdigest()


def _key_problem() -> Problem:
    return Problem(
        400,
        _("Invalid request"),
        _("The Idempotency-Key header must be 1 to 255 printable ASCII characters."),
        "validation",
        errors=[{"field": HEADER, "message": _("Use 1 to 255 printable ASCII characters.")}],
    )


def _claim(request: Request, key: str, digest: str) -> IdempotencyKey | None:
    """Our new claim, or None when the key is taken (the existing row is read after)."""
    try:
        with transaction.atomic():
            return IdempotencyKey.objects.create(
                owner=request.user,
                key=key,
                method=request.method,
                path=request.get_full_path()[:2000],
                request_hash=digest,
            )
    except IntegrityError:
        return None


def _take_over_stale(row: IdempotencyKey) -> bool:
    """Claim a key whose request died without finishing (one taker wins); the row then
    carries our claim."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.API_IDEMPOTENCY_CLAIM_SECONDS)
    taken = IdempotencyKey.objects.filter(
        pk=row.pk, completed_at__isnull=True, claimed_at__lte=stale_before
    ).update(claimed_at=now)
    if taken:
        row.claimed_at = now
    return bool(taken)


def _ours(row: IdempotencyKey):
    """The key's row while it still holds our claim (not taken over, not finished)."""
    return IdempotencyKey.objects.filter(
        pk=row.pk, claimed_at=row.claimed_at, completed_at__isnull=True
    )


def _in_use(request: Request) -> HttpResponse:
    return problem_response(
        Problem(
            409,
            _("Request in progress"),
            _("A request with this Idempotency-Key is still being processed. Retry shortly."),
            "idempotency-key-in-use",
            headers={"Retry-After": "1"},
        ),
        request.path,
    )


def _replay(row: IdempotencyKey) -> HttpResponse:
    response = HttpResponse(
        bytes(row.response_body or b""),
        status=row.response_status,
        content_type=row.response_content_type or None,
    )
    for name, value in row.response_headers.items():
        response[name] = value
    response[REPLAYED_HEADER] = "true"
    return response


def _existing(request: Request, key: str, digest: str):
    """The answer for a key already taken: replay, 422, 409 in flight, or None when the
    stale claim was taken over (the view runs)."""
    row = IdempotencyKey.objects.filter(owner=request.user, key=key).first()
    if row is None:  # purged or released in between: the caller claims again
        return "again"
    if row.request_hash != digest:
        return problem_response(
            Problem(
                422,
                _("Idempotency key reused"),
                _(
                    "This Idempotency-Key was already used with another request (method, path "
                    "or body). Use a new key for a new request."
                ),
                "idempotency-key-reused",
            ),
            request.path,
        )
    if row.completed_at is not None:
        return _replay(row)
    if _take_over_stale(row):
        return row
    return _in_use(request)


def _rendered(response) -> tuple[bytes, str]:
    if isinstance(response, Response):
        content_type = response.content_type or "application/json"
        body = b"" if response.data is None else JSONRenderer().render(response.data)
        return body, content_type
    return bytes(response.content), response.get("Content-Type", "")


def _finish(row: IdempotencyKey, response) -> HttpResponse:
    body, content_type = _rendered(response)
    kept = {name: response[name] for name in KEPT_HEADERS if name in response}
    stored = _ours(row).update(
        response_status=response.status_code,
        response_body=body,
        response_content_type=content_type,
        response_headers=kept,
        completed_at=timezone.now(),
    )
    if not stored:
        raise _ClaimLost
    # The first answer is the bytes that will be replayed.
    final = HttpResponse(body, status=response.status_code, content_type=content_type)
    for name, value in response.items():
        if name.lower() not in {"content-type", "content-length"}:
            final[name] = value
    return final


def _run(call, request: Request):
    """The view's response; a domain or API error becomes its problem response, an
    unexpected error propagates (500)."""
    try:
        return call()
    except Exception as exc:
        found = as_problem(exc)
        if found is None:
            raise
        response = problem_response(found, request.path)
        auth_header = getattr(exc, "auth_header", None)
        if auth_header:
            response["WWW-Authenticate"] = auth_header
        return response


def _idempotent_call(request: Request, call):
    raw_key = request.headers.get(HEADER)
    if raw_key is None:
        return call()
    if not KEY_PATTERN.fullmatch(raw_key):
        raise _key_problem()
    digest = request_hash(request)
    # A body the parser refuses is answered its 400 now, before a key is claimed: a malformed
    # request leaves nothing behind, as it would without a key.
    request.data  # noqa: B018 - parses (and caches) the body
    for _attempt in range(3):
        row = _claim(request, raw_key, digest)
        if row is None:
            outcome = _existing(request, raw_key, digest)
            if isinstance(outcome, str):
                continue
            if not isinstance(outcome, IdempotencyKey):
                return outcome
            row = outcome
        break
    else:
        raise RuntimeError("idempotency key kept vanishing")
    try:
        with transaction.atomic():
            response = _run(call, request)
            if response.status_code >= 500:
                raise _ViewFailed(response)
            return _finish(row, response)
    except _ClaimLost:
        logger.warning(
            "Idempotency-Key of user %s on %s was taken over while its request ran; "
            "the request was rolled back.",
            request.user.pk,
            request.path,
        )
        return _in_use(request)
    except _ViewFailed as failed:
        _ours(row).delete()
        return failed.response
    except BaseException:
        _ours(row).delete()
        raise


def idempotent(view):
    """Decorate a POST or PUT handler: `def post(self, request, ...)` of an APIView, or an
    `@api_view(["POST"])` function. Needs an authenticated request (it runs after DRF's
    authentication, permissions and throttles)."""

    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        request = next(arg for arg in args if isinstance(arg, Request))
        return _idempotent_call(request, lambda: view(*args, **kwargs))

    wrapper.idempotent = True
    return wrapper


def idempotency_keys_purge(*, now=None) -> int:
    """Delete keys older than API_IDEMPOTENCY_KEY_HOURS; the number deleted."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=settings.API_IDEMPOTENCY_KEY_HOURS)
    deleted, _per_model = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted


__all__ = ["HEADER", "PROBLEM_CONTENT_TYPE", "idempotency_keys_purge", "idempotent"]
