"""A claim taken over as stale while its first request is still running: only one of the two
requests commits its result, the other is rolled back (two real connections, in threads)."""

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from api.models import ApiToken, IdempotencyKey
from tests.api.conftest import TokenClient
from tests.api.foundation.urls import Gate, GatedCreate

URL = "/api/test/tokens/gated/"
pytestmark = [
    pytest.mark.urls("tests.api.foundation.urls"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def gates():
    GatedCreate.gates = []
    yield GatedCreate.gates
    GatedCreate.gates = []


@contextmanager
def _opened_at_exit(*held):
    """Opens every gate when the block ends, so that a failed assertion frees the threads."""
    try:
        yield
    finally:
        for gate in held:
            gate.release.set()


def _post(raw, name="slow"):
    try:
        return TokenClient().for_token(raw).post(URL, {"name": name}, HTTP_IDEMPOTENCY_KEY="k")
    finally:
        connection.close()


def _make_the_claim_stale(customer, settings):
    """What a request blocked past API_IDEMPOTENCY_CLAIM_SECONDS leaves in the table."""
    old = timezone.now() - timedelta(seconds=settings.API_IDEMPOTENCY_CLAIM_SECONDS + 1)
    assert IdempotencyKey.objects.filter(owner=customer, key="k").update(claimed_at=old) == 1


def test_the_first_request_finishing_after_a_takeover_commits_nothing(
    api_token, customer, settings, gates
):
    raw = api_token(customer)
    first_gate = Gate()
    gates.append(first_gate)
    with ThreadPoolExecutor(max_workers=2) as pool, _opened_at_exit(first_gate):
        first = pool.submit(_post, raw)
        assert first_gate.entered.wait(timeout=30)
        _make_the_claim_stale(customer, settings)
        second = pool.submit(_post, raw).result(timeout=30)
        assert second.status_code == 201, second.content
        first_gate.release.set()
        late = first.result(timeout=30)

    # The late first request is refused and its work rolled back: one token, one result.
    assert late.status_code == 409, late.content
    assert late["Content-Type"] == "application/problem+json"
    assert late.json()["type"].endswith("/idempotency-key-in-use")
    assert late["Retry-After"] == "1"
    assert ApiToken.objects.filter(owner=customer, name="slow").count() == 1
    row = IdempotencyKey.objects.get(owner=customer, key="k")
    assert bytes(row.response_body) == second.content
    replay = _post(raw)
    assert replay["Idempotent-Replayed"] == "true" and replay.content == second.content


def test_a_first_request_failing_after_a_takeover_leaves_the_new_claim(
    api_token, customer, settings, gates
):
    raw = api_token(customer)
    first_gate, second_gate = Gate(status=503), Gate()
    gates.extend([first_gate, second_gate])
    with ThreadPoolExecutor(max_workers=2) as pool, _opened_at_exit(first_gate, second_gate):
        first = pool.submit(_post, raw)
        assert first_gate.entered.wait(timeout=30)
        _make_the_claim_stale(customer, settings)
        second = pool.submit(_post, raw)
        assert second_gate.entered.wait(timeout=30)
        first_gate.release.set()
        assert first.result(timeout=30).status_code == 503
        # The second request still holds the key: a third one waits for it.
        third = _post(raw)
        assert third.status_code == 409, third.content
        second_gate.release.set()
        assert second.result(timeout=30).status_code == 201

    assert ApiToken.objects.filter(owner=customer, name="slow").count() == 1
    assert IdempotencyKey.objects.get(owner=customer, key="k").response_status == 201
