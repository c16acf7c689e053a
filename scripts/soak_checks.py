"""The soak's verdict: every payment in the state its flow calls for, the balances the flows
imply, the reconciliation clean, and nothing alarming in the stack's output."""

import re
import time
from datetime import UTC, datetime

from soak_flows import Driver, ledger_balance

SITE_LINK = re.compile(r"https?://[^\s\"'<>]+/account/[^\s\"'<>]*")
# Output of the stack that means something broke (a worker crash, a task that failed, the
# SQLite files refusing a writer).
ALARMS = {
    "worker crashed": re.compile(r"Unrecoverable error"),
    "critical log line": re.compile(r"\bCRITICAL\b"),
    "task failed": re.compile(r"\] raised unexpected:"),
    "database locked": re.compile(r"database is locked"),
    "server error": re.compile(r"\" 5\d\d \d+$|Internal Server Error", re.MULTILINE),
    "traceback": re.compile(r"Traceback \(most recent call last\)"),
}


def expectation_problems(driver: Driver) -> list[str]:
    from payments.models import CryptoPayment
    from rental.models import Order

    problems = []
    for expect in driver.expectations:
        where = f"{expect.scenario} ({expect.email})"
        if expect.payment_id is not None:
            payment = CryptoPayment.objects.get(pk=expect.payment_id)
            if payment.status != expect.payment_status:
                problems.append(
                    f"{where}: payment {payment.pk} is {payment.status}, "
                    f"expected {expect.payment_status}"
                )
            elif expect.review_reason and payment.review_reason != expect.review_reason:
                problems.append(
                    f"{where}: payment {payment.pk} is in review for {payment.review_reason!r}, "
                    f"expected {expect.review_reason!r}"
                )
        if expect.order_id is not None:
            status = Order.objects.get(pk=expect.order_id).status
            if status not in expect.order_statuses:
                problems.append(
                    f"{where}: order {expect.order_id} is {status}, "
                    f"expected {' or '.join(sorted(expect.order_statuses))}"
                )
    return problems


def settle(driver: Driver, *, timeout: float, progress) -> list[str]:
    """Wait (at most `timeout`) until every expectation holds: expiries must pass and the
    last transfers be confirmed. The problems still left then."""
    deadline = time.monotonic() + timeout
    while True:
        problems = expectation_problems(driver)
        if not problems or time.monotonic() > deadline:
            return problems
        progress(f"settling: {len(problems)} payments or orders not yet in their final state")
        time.sleep(10)


def balance_problems(driver: Driver) -> list[str]:
    problems = []
    for customer in driver.customers:
        held = ledger_balance(customer.email)
        if held != customer.balance:
            problems.append(
                f"{customer.email}: the ledger holds {held} USD, the flows imply {customer.balance}"
            )
    return problems


def reconciliation_problems(started: datetime) -> tuple[str, list[str]]:
    """finance's reconciliation over the days of the soak (payments/finance/services.py)."""
    from payments.finance.services import reconciliation_run

    today = datetime.now(UTC).date()
    run = reconciliation_run(period_start=started.astimezone(UTC).date(), period_end=today)
    problems = [f"{item['check']}: {item['detail']}" for item in run.discrepancies]
    totals = ", ".join(
        f"{kind} {values.get('count', '?')}" for kind, values in sorted(run.totals_by_kind.items())
    )
    return f"run {run.pk}, trial balance {run.trial_balance}, transactions: {totals}", problems


def log_problems(log: str, base_url: str, *, confirmed_payments: int) -> tuple[str, list[str]]:
    problems = [
        f"{what}: {len(found)}× (first: {found[0][:200]!r})"
        for what, pattern in ALARMS.items()
        if (found := [line for line in log.splitlines() if pattern.search(line)])
    ]
    links = SITE_LINK.findall(log)
    wrong = sorted({link for link in links if not link.startswith(base_url + "/")})
    if wrong:
        problems.append(f"emails link to another site than {base_url}: {wrong[:3]}")
    if confirmed_payments and not links:
        problems.append("no email linked to the site, though payments were confirmed")
    emails = log.count("Content-Transfer-Encoding:")
    return f"{emails} emails, {len(links)} links to the site in them", problems
