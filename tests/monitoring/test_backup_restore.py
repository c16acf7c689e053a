"""`manage.py backup` and `manage.py restore`, as an operator runs them: a backup of the test
database restored into a new database holds every order, payment, ledger entry and receipt,
row for row; a database that is not empty is refused unless --replace; the embedded SQLite
default is backed up and restored too."""

import os
import subprocess
import sys
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection

from payments.crypto.services.balance_payment import balance_pay_order
from payments.crypto.services.payments import payment_create_top_up
from tests.celery_worker import database_url_of, pg_connect
from tests.embedded.stack import embedded_env

ROOT = Path(__file__).resolve().parents[2]
TABLES = {
    "orders": "SELECT * FROM rental_order ORDER BY id",
    "payments": "SELECT * FROM payments_cryptopayment ORDER BY id",
    "ledger entries": "SELECT * FROM payments_ledgerentry ORDER BY id",
    "ledger transactions": "SELECT * FROM payments_ledgertransaction ORDER BY id",
    "receipts": "SELECT * FROM payments_receipt ORDER BY id",
}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=180,
    )  # fmt: skip


def rows(conn, query: str) -> list[tuple]:
    return conn.execute(query).fetchall()


@pytest.fixture
def new_database():
    """An empty PostgreSQL database beside the test's; dropped at the end."""
    settings_dict = dict(connection.settings_dict)
    name = f"{settings_dict['NAME'][:40]}_restore_{uuid.uuid4().hex[:6]}"
    admin = pg_connect(settings_dict, "restore-test-admin")
    admin.autocommit = True
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield {**settings_dict, "NAME": name}
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@pytest.mark.django_db(transaction=True)
def test_a_backup_restored_into_a_new_database_holds_every_row(
    customer, credit, catalogue, place_order, chain, tmp_path, new_database
):
    credit(customer, "5000.00")
    for lots in (1, 2):
        order = place_order(customer, catalogue["h100"], lots=lots)
        balance_pay_order(order_id=order.pk, customer=customer)
    place_order(customer, catalogue["h200"])  # awaiting payment
    payment_create_top_up(
        customer=customer, amount_usd=Decimal("50.00"), network_key="local", asset_symbol="tUSDC"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    source = {**env, "DATABASE_URL": database_url_of(connection.settings_dict)}
    target = {**env, "DATABASE_URL": database_url_of(new_database)}
    backup = tmp_path / "gpu-rental.dump"

    made = manage("backup", str(backup), env=source)
    assert made.returncode == 0, made.stderr
    assert f"Backup written: {backup}" in made.stdout and backup.stat().st_size > 0

    restored = manage("restore", str(backup), env=target)
    assert restored.returncode == 0, restored.stderr
    assert "3 orders, 1 payments" in restored.stdout
    with (
        pg_connect(connection.settings_dict, "restore-test-before") as before,
        pg_connect(new_database, "restore-test-after") as after,
    ):
        for what, query in TABLES.items():
            expected = rows(before, query)
            assert expected, what  # there is something to compare
            assert rows(after, query) == expected, what

    again = manage("restore", str(backup), env=target)
    assert again.returncode != 0 and "is not empty" in again.stderr
    replaced = manage("restore", str(backup), "--replace", env=target)
    assert replaced.returncode == 0, replaced.stderr


def test_the_embedded_sqlite_default_is_backed_up_and_restored(tmp_path):
    first = embedded_env(tmp_path / "var")
    assert manage("migrate", "--noinput", env=first).returncode == 0
    assert manage("load_demo_catalogue", env=first).returncode == 0
    nowhere = manage("backup", str(tmp_path / "missing" / "backup.sqlite3"), env=first)
    assert nowhere.returncode != 0 and "no folder" in nowhere.stderr
    assert "Traceback" not in nowhere.stderr
    backup = tmp_path / "backup.sqlite3"
    made = manage("backup", str(backup), env=first)
    assert made.returncode == 0, made.stderr

    second = embedded_env(tmp_path / "var2")
    restored = manage("restore", str(backup), env=second)
    assert restored.returncode == 0, restored.stderr
    assert "0 orders" in restored.stdout
    catalogue = manage(
        "shell", "-c", "from rental.models import GpuModel, LotPrice;"
        "print(GpuModel.objects.count(), LotPrice.objects.count())", env=second,
    )  # fmt: skip
    assert catalogue.stdout.splitlines()[-1].split() == ["4", "12"], catalogue.stderr
    refused = manage("restore", str(backup), env=second)
    assert refused.returncode != 0 and "--replace" in refused.stderr
