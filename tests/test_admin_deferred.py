"""The admin's ModelAdmins are registered by its first use, not at start-up
(config/admin_site.py): a process that serves no admin page never imports the apps' `admin`
modules, while the admin's pages (tests/rental/test_admin.py and others), a `reverse("admin:…")`
and the system checks see every ModelAdmin as before.

Each case runs in a fresh interpreter: the tests' own process may have registered them."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PRELUDE = """
import json, sys
import django
django.setup()
from django.contrib import admin
from rental.models import Order
ADMIN_MODULES = ("rental.admin", "payments.admin", "accounts.admin", "allauth.account.admin")
def state():
    return {
        "modules": sorted(name for name in ADMIN_MODULES if name in sys.modules),
        "order registered": admin.site.is_registered(Order),
    }
report = {"after setup": state()}
"""


def run_fresh(script: str) -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    result = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


REGISTERED = {
    "modules": ["accounts.admin", "allauth.account.admin", "payments.admin", "rental.admin"],
    "order registered": True,
}
NOT_YET = {"modules": [], "order registered": False}


def test_a_reverse_into_the_admin_registers_the_model_admins():
    report = run_fresh(
        """
        from django.urls import reverse
        report["catalogue"] = reverse("rental:catalogue")
        report["after a page's reverse"] = state()
        report["order change"] = reverse("admin:rental_order_change", args=[7])
        report["after the admin's reverse"] = state()
        print(json.dumps(report))
        """
    )

    assert report == {
        "after setup": NOT_YET,
        "catalogue": "/",
        "after a page's reverse": NOT_YET,
        "order change": "/admin/rental/order/7/change/",
        "after the admin's reverse": REGISTERED,
    }


def test_the_system_checks_check_every_model_admin():
    report = run_fresh(
        """
        from django.core import checks
        errors = checks.run_checks(tags=[checks.Tags.admin])
        report["errors"] = [str(error) for error in errors]
        report["after the checks"] = state()
        print(json.dumps(report))
        """
    )

    assert report == {"after setup": NOT_YET, "errors": [], "after the checks": REGISTERED}
