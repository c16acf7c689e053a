"""The payment's one state machine: every pair of statuses, allowed or refused by name."""

import itertools

import pytest
from django.db import transaction

from payments.crypto.services.status import InvalidPaymentTransition, payment_set_status
from payments.locks import lock_payments
from payments.models import PAYMENT_TRANSITIONS, CryptoPayment, PaymentEvent, PaymentStatus
from tests.states import payment_path, payment_walk

PAIRS = list(itertools.product(PaymentStatus.values, repeat=2))


def test_the_map_names_every_status_and_only_known_ones():
    assert set(PAYMENT_TRANSITIONS) == set(PaymentStatus.values)
    for targets in PAYMENT_TRANSITIONS.values():
        assert targets <= set(PaymentStatus.values)


def test_every_status_is_reachable_from_a_new_payment():
    for status in PaymentStatus.values:
        payment_path(PaymentStatus.AWAITING, status)  # KeyError when unreachable


@pytest.mark.parametrize(("from_status", "to_status"), PAIRS)
def test_every_pair_is_allowed_by_the_map_or_refused_by_name(
    from_status, to_status, top_up, operator
):
    payment = top_up("20.00")
    payment_walk(payment, from_status)  # reach it the way the map allows
    events = PaymentEvent.objects.filter(payment=payment, kind="status").exclude(
        reason="test: on the way"
    )
    allowed = to_status in PAYMENT_TRANSITIONS[from_status]
    extra = {"review_reason": "overpaid"} if to_status == PaymentStatus.NEEDS_REVIEW else {}

    with transaction.atomic():
        locked = lock_payments([payment.pk])[payment.pk]
        if allowed:
            payment_set_status(
                locked, to_status=to_status, actor=operator, reason="walking the map", **extra
            )
        else:
            with pytest.raises(InvalidPaymentTransition):
                payment_set_status(locked, to_status=to_status, reason="walking the map", **extra)

    stored = CryptoPayment.objects.get(pk=payment.pk)
    if allowed:
        assert stored.status == to_status
        event = events.get()
        assert (event.from_status, event.to_status, event.actor, event.reason) == (
            from_status,
            to_status,
            operator,
            "walking the map",
        )
        assert event.data == ({"review": "overpaid"} if extra else {})
    else:
        assert stored.status == from_status
        assert not events.exists()


def test_a_payment_sent_to_review_must_say_why(top_up):
    payment = top_up("20.00")
    with transaction.atomic():
        locked = lock_payments([payment.pk])[payment.pk]
        with pytest.raises(ValueError, match="review reason"):
            payment_set_status(locked, to_status=PaymentStatus.NEEDS_REVIEW)
    assert CryptoPayment.objects.get(pk=payment.pk).status == PaymentStatus.AWAITING


def test_no_other_code_assigns_a_payment_status():
    """The setter is the only writer: no `.status = ` on a payment, no status in an update()."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[3] / "payments"
    offenders = []
    for path in root.rglob("*.py"):
        setter = path.relative_to(root).as_posix() == "crypto/services/status.py"
        if "migrations" in path.parts or setter:
            continue
        text = path.read_text()
        for pattern in (r"payment\.status\s*=[^=]", r"\.update\([^)]*\bstatus="):
            offenders += [f"{path.name}: {m.group(0)}" for m in re.finditer(pattern, text)]
    assert offenders == []
