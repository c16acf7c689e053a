"""On the embedded default's SQLite database, a number too large for an integer column in a
receipt URL or filter answers like an unknown one (an empty list, 404): SQLite raised
OverflowError, a 500, when it reached a foreign key's column."""

import subprocess
import sys

from .stack import ROOT, embedded_env

SCRIPT = r"""
import django
django.setup()
from django.core.management import call_command
from django.test import Client
from accounts.models import User

call_command("migrate", verbosity=0)
customer = User.objects.create_user(
    email="ada@example.com", password="x" * 20, first_name="Ada", last_name="Lovelace"
)
browser = Client(raise_request_exception=False, HTTP_HOST="127.0.0.1")
browser.force_login(customer)
huge = 10**20
for url in (
    f"/account/receipts/?order={huge}",
    f"/account/orders/{huge}/receipt/",
    f"/account/extensions/{huge}/receipt/",
):
    print(url.split("/")[2], browser.get(url).status_code)
"""


def test_huge_ids_in_receipt_urls_are_not_a_server_error_on_sqlite(tmp_path):
    env = embedded_env(tmp_path / "var")
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-3:] == [
        "receipts 200",
        "orders 404",
        "extensions 404",
    ], result.stdout[-3000:] + result.stderr[-3000:]
