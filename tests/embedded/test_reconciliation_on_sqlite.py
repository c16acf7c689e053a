"""Reconciliation on the embedded default's SQLite database: SQLite sums amounts as floating
point, which made a balance of 41158.08 USD differ from "the sum of its entries, 41158.08 USD"
after a 30-minute `make soak`."""

import subprocess
import sys

from .stack import ROOT, embedded_env

SCRIPT = r"""
import django
django.setup()
from decimal import Decimal
from django.core.management import call_command
from django.utils import timezone
from payments.finance.services import reconciliation_run

call_command("migrate", verbosity=0)
# Settlement posts in batches: the cached balance moves once per batch by the batch's exact
# total (a float addition on SQLite), while SUM adds the entries one by one: the two float
# results part by a hair after enough postings of cents.
from django.db import transaction
from payments.models import LedgerAccountKind, TransactionKind
from accounts.models import User
from payments.ledger.services.posting import (
    Posting, customer_account, ledger_post_many, system_account,
)
customer = User.objects.create_user(
    email="ada@example.com", password="x" * 20, first_name="Ada", last_name="Lovelace"
)
balance = customer_account(customer)
revenue = system_account(LedgerAccountKind.REVENUE)
amounts = [Decimal(a) for a in ("1915.20", "446.88", "0.07", "89.99", "0.31")]
for batch in range(60):
    with transaction.atomic():
        ledger_post_many([
            Posting(kind=TransactionKind.ADJUSTMENT, lines=[(revenue, -a), (balance, a)],
                    memo="test", idempotency_key=f"k{batch}-{n}")
            for n, a in enumerate(amounts * 4)
        ])
today = timezone.now().date()
run = reconciliation_run(period_start=today, period_end=today)
print("OK" if run.ok else run.discrepancies)
"""


def test_reconciliation_on_sqlite_finds_no_rounding_discrepancy(tmp_path):
    env = embedded_env(tmp_path / "var")
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "OK", result.stdout[-3000:]


SPEND_TO_ZERO = r"""
import django
django.setup()
from decimal import Decimal
from django.core.management import call_command
from accounts.models import User
from payments.models import LedgerAccount, LedgerAccountKind, TransactionKind
from payments.ledger.services.posting import customer_account, ledger_post, system_account

call_command("migrate", verbosity=0)
customer = User.objects.create_user(
    email="ada@example.com", password="x" * 20, first_name="Ada", last_name="Lovelace"
)
balance = customer_account(customer)
revenue = system_account(LedgerAccountKind.REVENUE)
# 0.10 + 0.70 - 0.80 is -1.1e-16 in floating point: below the balance's "never negative" check.
for key, amount in (("a", Decimal("0.10")), ("b", Decimal("0.70"))):
    ledger_post(kind=TransactionKind.ADJUSTMENT, lines=[(revenue, -amount), (balance, amount)],
                memo="credit", idempotency_key=key)
ledger_post(kind=TransactionKind.ADJUSTMENT,
            lines=[(balance, Decimal("-0.80")), (revenue, Decimal("0.80"))],
            memo="spend it all", idempotency_key="c")
print(LedgerAccount.objects.get(pk=balance.pk).balance)
"""


def test_spending_a_balance_to_zero_on_sqlite(tmp_path):
    """The cached balance moves by `balance + amount` in SQL, a float addition on SQLite."""
    env = embedded_env(tmp_path / "var")
    result = subprocess.run(
        [sys.executable, "-c", SPEND_TO_ZERO], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "0.00"
