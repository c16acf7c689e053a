"""One log line per event, with the order's and the payment's references; JSON lines when
LOG_FORMAT=json."""

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import transaction

from config.logging import JsonFormatter
from payments.crypto.services.balance_payment import balance_pay_order
from payments.crypto.services.payments import payment_create_for_order
from payments.crypto.services.status import payment_set_status
from payments.locks import lock_payments
from payments.models import PaymentStatus
from rental.services import order_cancel_by_customer

ROOT = Path(__file__).resolve().parents[2]


def records(caplog, logger: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == logger]


# ---------------------------------------------------------------------------- JSON lines


def test_the_json_formatter_writes_one_object_with_the_extra_fields():
    record = logging.LogRecord(
        "payments.crypto.services.status", logging.INFO, __file__, 1, "payment %s", ("PAY-1",),
        None,
    )  # fmt: skip
    record.order, record.payment, record.amount = "GR-000007", "PAY-000001", 12.5
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry.pop("time").endswith("+00:00")
    assert entry == {
        "level": "INFO",
        "logger": "payments.crypto.services.status",
        "message": "payment PAY-1",
        "order": "GR-000007",
        "payment": "PAY-000001",
        "amount": 12.5,
    }


def test_the_json_formatter_keeps_a_traceback_on_the_same_line():
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    line = JsonFormatter().format(record)
    assert "\n" not in line
    assert "ValueError: boom" in json.loads(line)["exc_info"]


SNIPPET = (
    "import django, logging; django.setup();"
    "logging.getLogger('rental.services.orders').info("
    "'order %s placed', 'GR-000042', extra={'order': 'GR-000042', 'event': 'order_status'})"
)


def run_django(log_format: str | None) -> str:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    env.pop("LOG_FORMAT", None)
    if log_format:
        env["LOG_FORMAT"] = log_format
    done = subprocess.run(
        [sys.executable, "-c", SNIPPET], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    return done.stderr


def test_log_format_json_writes_json_lines():
    lines = [line for line in run_django("json").splitlines() if "GR-000042" in line]
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["level"] == "INFO" and entry["logger"] == "rental.services.orders"
    assert entry["message"] == "order GR-000042 placed"
    assert entry["order"] == "GR-000042" and entry["event"] == "order_status"
    assert "time" in entry


def test_the_default_format_is_plain_text():
    (line,) = [line for line in run_django(None).splitlines() if "GR-000042" in line]
    assert line.endswith("INFO rental.services.orders: order GR-000042 placed")


# ------------------------------------------------------------------- one line per event


@pytest.mark.django_db
def test_a_payment_status_change_logs_one_line_with_its_references(
    chain, customer, catalogue, place_order, caplog, django_capture_on_commit_callbacks
):
    order = place_order(customer, catalogue["h100"])
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    caplog.set_level(logging.INFO)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        locked = lock_payments([payment.pk])[payment.pk]
        payment_set_status(locked, to_status=PaymentStatus.EXPIRED, reason="time ran out")
        assert records(caplog, "payments.crypto.services.status") == []  # not before commit

    (line,) = records(caplog, "payments.crypto.services.status")
    assert line.getMessage() == (
        f"payment {payment.reference} (order {order.reference}) awaiting -> expired: time ran out"
    )
    assert (line.payment, line.order, line.from_status, line.to_status) == (
        payment.reference,
        order.reference,
        "awaiting",
        "expired",
    )
    entry = json.loads(JsonFormatter().format(line))
    assert entry["payment"] == payment.reference and entry["order"] == order.reference


@pytest.mark.django_db
def test_a_change_rolled_back_logs_nothing(
    chain, customer, catalogue, place_order, caplog, django_capture_on_commit_callbacks
):
    order = place_order(customer, catalogue["h100"])
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    caplog.set_level(logging.INFO)
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        locked = lock_payments([payment.pk])[payment.pk]
        payment_set_status(locked, to_status=PaymentStatus.EXPIRED, reason="time ran out")
        raise RuntimeError("rolled back")
    assert records(caplog, "payments.crypto.services.status") == []


@pytest.mark.django_db
def test_an_order_transition_logs_one_line(
    customer, catalogue, place_order, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.INFO)
    with django_capture_on_commit_callbacks(execute=True):
        order = place_order(customer, catalogue["h100"])
    (placed,) = records(caplog, "rental.services.orders")
    assert placed.getMessage() == f"order {order.reference} (new) -> awaiting_payment: Order placed"
    caplog.clear()
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel_by_customer(order_id=order.pk, customer=customer)
    (cancelled,) = records(caplog, "rental.services.orders")
    assert cancelled.order == order.reference
    assert (cancelled.from_status, cancelled.to_status) == ("awaiting_payment", "cancelled")
    assert cancelled.actor_id == customer.pk


@pytest.mark.django_db
def test_a_ledger_posting_logs_one_line_with_its_order(
    customer, catalogue, place_order, credit, caplog, django_capture_on_commit_callbacks
):
    order = place_order(customer, catalogue["h100"], duration_days=3)
    credit(customer, "5000.00")
    caplog.set_level(logging.INFO)
    with django_capture_on_commit_callbacks(execute=True):
        balance_pay_order(order_id=order.pk, customer=customer)
    (posting,) = records(caplog, "payments.ledger.services.posting")
    assert posting.order == order.reference and posting.kind == "order_payment"
    assert posting.amount_usd == str(order.total_usd)
    assert f"for order {order.reference}" in posting.getMessage()
    transitions = [r.to_status for r in records(caplog, "rental.services.orders")]
    assert transitions[0] == "paid"
