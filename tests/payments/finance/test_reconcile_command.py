"""`manage.py reconcile` for cron: exit 0 and "No discrepancy." on a healthy ledger, 1 with the
discrepancies listed when something does not reconcile, 2 on a bad date; each run is stored
like the console's."""

import json
import subprocess
import sys
from datetime import UTC, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from payments.ledger.services.posting import customer_account
from payments.models import LedgerAccount, ReconciliationRun
from tests.celery_worker import database_url_of

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.django_db(transaction=True)


def reconcile(*args: str) -> subprocess.CompletedProcess:
    """The command as cron runs it: its own process, on the test database."""
    import os

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url_of(connection.settings_dict),
    }
    return subprocess.run(
        [sys.executable, "manage.py", "reconcile", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_healthy_ledger_exits_0_and_a_corrupted_balance_exits_1(customer, credit):
    credit(customer, "25.00")
    today = timezone.now().astimezone(UTC).date().isoformat()

    healthy = reconcile("--from", today)
    assert healthy.returncode == 0, healthy.stderr
    assert "No discrepancy." in healthy.stdout
    assert "Trial balance: 0.00" in healthy.stdout

    account = customer_account(customer)
    LedgerAccount.objects.filter(pk=account.pk).update(balance=account.balance + Decimal("1"))
    broken = reconcile("--from", today, "--json")
    assert broken.returncode == 1
    report = json.loads(broken.stdout)
    assert report["ok"] is False
    assert [d["check"] for d in report["discrepancies"]] == ["account_balance"]

    runs = ReconciliationRun.objects.order_by("pk")
    assert [run.ok for run in runs] == [True, False]
    assert runs.last().pk == report["id"]


def test_yesterday_by_default_and_bad_dates_exit_2():
    yesterday = timezone.now().astimezone(UTC).date() - timedelta(days=1)
    assert reconcile().returncode == 0
    run = ReconciliationRun.objects.get()
    assert (run.period_start, run.period_end) == (yesterday, yesterday)

    for args, message in [
        (["--from", "2026-13-01"], "not a date"),
        (["--from", "２０２６-01-01"], "not a date"),
        (["--from", "2026-02-01", "--to", "2026-01-01"], "ends on or after its start"),
    ]:
        result = reconcile(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr
    assert ReconciliationRun.objects.count() == 1  # refused runs store nothing
