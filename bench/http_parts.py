"""The per-request parts that bench/http_pages.py found costly, each against what it replaced,
measured in one process as worker CPU time per call (median, min and max over interleaved
rounds). Nothing here asserts a time.

- the session of a logged-in request: the database engine against the cached one (Redis);
- the logged-in user and their staff roles: ModelBackend's user, then the groups query of
  `has_role`, against `accounts.auth_backends` (one statement, compiled once);
- the order page's stablecoin radios and SSH-key field: Django's widget and field-group
  templates against the order page's own markup (taken from the templates themselves).

On a throw-away PostgreSQL database (DATABASE_URL's name plus "_http_parts", dropped at the
end); Redis from REDIS_URL. Environment: BENCH_PARTS_ROUNDS (7), BENCH_PARTS_CALLS (300).
"""

import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_load import ROOT, database_url_for, drop_database, recreate_database  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_PARTS_ROUNDS", "7"))
CALLS = int(os.environ.get("BENCH_PARTS_CALLS", "300"))


def cpu_ms_per_call(work) -> float:
    start = time.process_time()
    for _ in range(CALLS):
        work()
    return (time.process_time() - start) * 1000 / CALLS


def compare(label: str, before, after) -> None:
    for work in (before, after):  # warm both (statement caches, template loading)
        work()
    runs = {"before": [], "after": []}
    for number in range(ROUNDS):
        order = ("before", "after") if number % 2 == 0 else ("after", "before")
        for which in order:
            runs[which].append(cpu_ms_per_call(before if which == "before" else after))
    ratios = [b / a for b, a in zip(runs["before"], runs["after"], strict=True)]

    def show(values, digits=3):
        low, middle, high = min(values), statistics.median(values), max(values)
        return f"{middle:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"

    print(
        f"  {label:<34} {show(runs['before']):>24} {show(runs['after']):>24} {show(ratios, 2):>20}",
        flush=True,
    )


def template_part(path: str, start: str) -> str:
    """The `{% with ... %}…{% endwith %}` block of a template that starts with `start`."""
    text = (ROOT / "templates" / path).read_text()
    found = re.search(re.escape(start) + r".*?\{% endwith %\}", text, re.S)
    assert found, (path, start)
    return found.group(0)


def main() -> None:
    database = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gpu_rental")
    name = database.rsplit("/", 1)[1].split("?")[0] + "_http_parts"
    recreate_database(name)
    os.environ["DATABASE_URL"] = database_url_for(name)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    try:
        run()
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(name)


def run() -> None:
    import django

    django.setup()
    from django.contrib.auth.backends import ModelBackend
    from django.contrib.auth.models import Group
    from django.contrib.sessions.backends import cached_db, db
    from django.core.management import call_command
    from django.template import engines

    from accounts.auth_backends import AuthenticationBackend
    from accounts.models import User
    from accounts.roles import FINANCE, OPERATORS, has_role
    from payments.chain.forms import StablecoinForm
    from payments.chain.selectors import StablecoinChoice
    from rental.forms import OrderSshKeyForm

    call_command("migrate", verbosity=0)
    user = User.objects.create_user(
        email="bench@example.com", password="x" * 12, first_name="Bench", last_name="User"
    )
    user.groups.add(Group.objects.get_or_create(name=FINANCE)[0])
    session = cached_db.SessionStore()
    session["_auth_user_id"] = str(user.pk)
    session.create()  # written to the database and the cache
    key = session.session_key

    print(
        f"Per-request parts, worker CPU ms per call, median (min–max) of {ROUNDS} interleaved "
        f"rounds of {CALLS} calls"
    )
    print(f"  {'part':<34} {'before':>24} {'after':>24} {'before ÷ after':>20}")
    compare(
        "session load",
        lambda: db.SessionStore(key).load(),
        lambda: cached_db.SessionStore(key).load(),
    )

    def roles_before():
        found = ModelBackend().get_user(user.pk)
        return has_role(found, FINANCE), has_role(found, OPERATORS)

    def roles_after():
        found = AuthenticationBackend().get_user(user.pk)
        return has_role(found, FINANCE), has_role(found, OPERATORS)

    assert roles_before() == roles_after() == (True, False)
    compare("user + staff roles (nav)", roles_before, roles_after)

    django_engine = engines["django"]
    choices = [
        StablecoinChoice(network_key=key, network_name=key.title(), asset_symbol=asset)
        for key in ("local", "base")
        for asset in ("USDC", "USDT")
    ]
    radios = django_engine.from_string(
        template_part("payments/_payment_options.html", "{% with field=crypto_form.stablecoin %}")
    )
    form = StablecoinForm(choices=choices)
    assert radios.render({"crypto_form": form}) == str(form["stablecoin"])
    compare(
        "stablecoin radios (4 choices)",
        lambda: str(StablecoinForm(choices=choices)["stablecoin"]),
        lambda: radios.render({"crypto_form": StablecoinForm(choices=choices)}),
    )
    ssh_field = django_engine.from_string(
        template_part("rental/_order_content.html", "{% with field=ssh_key_form.ssh_public_key %}")
    )
    form = OrderSshKeyForm(customer=user)
    assert ssh_field.render({"ssh_key_form": form}) == str(form["ssh_public_key"].as_field_group())
    compare(
        "SSH-key field group",
        lambda: str(OrderSshKeyForm(customer=user)["ssh_public_key"].as_field_group()),
        lambda: ssh_field.render({"ssh_key_form": OrderSshKeyForm(customer=user)}),
    )


if __name__ == "__main__":
    main()
