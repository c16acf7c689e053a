"""`manage.py reconcile` for cron: run every reconciliation check, store the run as the finance
console's button does, print the report, and exit 1 when anything does not reconcile (2 on bad
arguments), so cron's mail or a monitor notices."""

import json
from datetime import UTC, date, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from payments.finance.services import reconciliation_run

EXIT_DISCREPANCY = 1


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"not a date (YYYY-MM-DD): {text!r}", returncode=2) from None


class Command(BaseCommand):
    help = (
        "Reconcile the ledger, the chain, payments, orders and withdrawals for a period of UTC "
        "days (yesterday by default); exit 1 on any discrepancy."
    )

    def add_arguments(self, parser):
        parser.add_argument("--from", dest="start", help="first day, YYYY-MM-DD (UTC)")
        parser.add_argument("--to", dest="end", help="last day, YYYY-MM-DD (UTC), included")
        parser.add_argument("--json", action="store_true", help="print the run as JSON")

    def handle(self, *args, start=None, end=None, json: bool = False, **options):
        yesterday = timezone.now().astimezone(UTC).date() - timedelta(days=1)
        period_start = _day(start) if start else (_day(end) if end else yesterday)
        period_end = _day(end) if end else (period_start if start else yesterday)
        try:
            run = reconciliation_run(period_start=period_start, period_end=period_end)
        except ValueError as exc:
            raise CommandError(str(exc), returncode=2) from None
        if json:
            self.stdout.write(_as_json(run))
        else:
            self._report(run)
        if not run.ok:
            raise SystemExit(EXIT_DISCREPANCY)

    def _report(self, run) -> None:
        period = f"{run.period_start.isoformat()} to {run.period_end.isoformat()} (UTC)"
        self.stdout.write(f"Reconciliation run {run.pk}: {period}")
        self.stdout.write(f"Trial balance: {run.trial_balance:.2f}")
        if run.ok:
            self.stdout.write(self.style.SUCCESS("No discrepancy."))
            return
        self.stdout.write(self.style.ERROR(f"{len(run.discrepancies)} discrepancies:"))
        for discrepancy in run.discrepancies:
            self.stdout.write(f"- {discrepancy['check']}: {discrepancy['detail']}")


def _as_json(run) -> str:
    return json.dumps(
        {
            "id": run.pk,
            "period_start": run.period_start.isoformat(),
            "period_end": run.period_end.isoformat(),
            "ok": run.ok,
            "trial_balance": f"{run.trial_balance:.2f}",
            "discrepancies": run.discrepancies,
        },
        default=str,
    )
