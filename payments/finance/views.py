"""The finance console: balances, journal, receipts awaiting allocation, manual adjustments
and reconciliation.

For members of the "finance" group (and superusers) only: see `finance_required`.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from accounts.fields import ascii_int
from accounts.roles import FINANCE, role_required

from ..csv_export import csv_download, text_cell
from ..exceptions import InsufficientBalance, PaymentError
from ..ledger.services.balance import balance_adjust
from ..models import ReconciliationRun
from ..withdrawals.selectors import finance_withdrawal_counts, withdrawal_totals
from .forms import AdjustmentForm, BalanceSearchForm, JournalFilterForm, ReconciliationForm
from .selectors import (
    customer_balances,
    customer_balances_total,
    journal_entries,
    journal_transactions,
    reconciliation_report,
    reconciliation_run_get,
    reconciliation_run_last,
    reconciliation_runs_recent,
    unallocated_payments,
    unallocated_summary,
)
from .services import reconciliation_run

BALANCES_PER_PAGE = 50
JOURNAL_PER_PAGE = 50
UNALLOCATED_PER_PAGE = 50
CSV_CHUNK_SIZE = 1000


finance_required = role_required(FINANCE)


@finance_required
@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
    last_run = reconciliation_run_last()
    report = reconciliation_report(run=last_run) if last_run else None
    context = {
        "report": report,
        "withdrawals": withdrawal_totals(),
        "withdrawal_counts": finance_withdrawal_counts(),
    }
    return render(request, "finance/dashboard.html", context)


@finance_required
@require_GET
def balances(request: HttpRequest) -> HttpResponse:
    form = BalanceSearchForm(request.GET)
    if not form.is_valid():
        return render(request, "finance/balances.html", {"form": form, "page": None}, status=400)
    email = form.cleaned_data["email"]
    page = Paginator(customer_balances(email_contains=email), BALANCES_PER_PAGE).get_page(
        ascii_int(request.GET.get("page"))
    )
    context = {
        "form": form,
        "page": page,
        "accounts": page.object_list,
        "total": customer_balances_total(email_contains=email),
    }
    return render(request, "finance/balances.html", context)


@finance_required
@require_GET
def journal(request: HttpRequest) -> HttpResponse:
    form = JournalFilterForm(request.GET)
    if not form.is_valid():
        return render(request, "finance/journal.html", {"form": form, "page": None}, status=400)
    transactions = journal_transactions(filters=form.filters())
    page = Paginator(transactions, JOURNAL_PER_PAGE).get_page(ascii_int(request.GET.get("page")))
    context = {"form": form, "page": page, "transactions": page.object_list}
    return render(request, "finance/journal.html", context)


@finance_required
@require_GET
def unallocated(request: HttpRequest) -> HttpResponse:
    """The receipts awaiting allocation: the account's balance and every payment holding
    money in it, the longest waiting first."""
    page_number = ascii_int(request.GET.get("page"))
    page = Paginator(unallocated_payments(), UNALLOCATED_PER_PAGE).get_page(page_number)
    context = {"page": page, "payments": page.object_list, "summary": unallocated_summary()}
    return render(request, "finance/unallocated.html", context)


CSV_HEADER = [
    "transaction_id",
    "created_at",
    "kind",
    "memo",
    "actor_email",
    "order_reference",
    "account_kind",
    "customer_email",
    "asset",
    "network",
    "amount_usd",
]


def _csv_rows(entries):
    for entry in entries.iterator(chunk_size=CSV_CHUNK_SIZE):
        posted, account = entry.transaction, entry.account
        yield [
            posted.pk,
            posted.created_at.isoformat(),
            posted.kind,
            text_cell(posted.memo),
            text_cell(posted.actor.email if posted.actor else ""),
            posted.order.reference if posted.order else "",
            account.kind,
            text_cell(account.customer.email if account.customer else ""),
            text_cell(account.asset),
            text_cell(account.network),
            f"{entry.amount:.2f}",
        ]


@finance_required
@require_GET
def journal_csv(request: HttpRequest) -> HttpResponse:
    """One line per entry of the filtered journal, streamed: the export never sits in memory."""
    form = JournalFilterForm(request.GET)
    if not form.is_valid():
        return render(request, "finance/journal.html", {"form": form, "page": None}, status=400)
    entries = journal_entries(filters=form.filters())
    return csv_download(header=CSV_HEADER, rows=_csv_rows(entries), filename="journal.csv")


def _journal_of(email: str) -> str:
    return reverse("payments:finance_journal") + "?" + urlencode({"customer": email})


@finance_required
@require_http_methods(["GET", "POST"])
def adjustment_create(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        initial = {"customer_email": request.GET.get("email", "")[:254]}
        form = AdjustmentForm(actor=request.user, initial=initial)
        return render(request, "finance/adjustment_form.html", {"form": form})

    form = AdjustmentForm(request.POST, actor=request.user)
    if form.is_valid():
        try:
            posted = balance_adjust(
                customer=form.customer,
                amount=form.cleaned_data["amount"],
                credit=form.is_credit,
                reason=form.cleaned_data["reason"],
                actor=request.user,
                request_key=str(form.cleaned_data["request_key"]),
            )
        except InsufficientBalance as exc:
            form.add_error("amount", exc.message)
        except PaymentError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(
                request,
                _("Adjustment #%(number)s is posted to the balance of %(email)s.")
                % {"number": posted.pk, "email": form.customer.email},
            )
            return redirect(_journal_of(form.customer.email))
    return render(request, "finance/adjustment_form.html", {"form": form}, status=400)


def _requested_report(request: HttpRequest):
    if "run" not in request.GET:
        return None
    run_id = ascii_int(request.GET["run"])
    try:
        run = None if run_id is None else reconciliation_run_get(run_id=run_id)
    except ReconciliationRun.DoesNotExist:
        run = None
    if run is None:
        raise Http404(_("No such reconciliation run."))
    return reconciliation_report(run=run)


@finance_required
@require_http_methods(["GET", "POST"])
def reconciliation(request: HttpRequest) -> HttpResponse:
    """GET: the period form, the recent runs and, with ?run=<id>, that run's report.
    POST: run the checks on the period, store the run and show it."""
    if request.method == "POST":
        form = ReconciliationForm(request.POST)
        if form.is_valid():
            run = reconciliation_run(
                period_start=form.cleaned_data["date_from"],
                period_end=form.cleaned_data["date_to"],
                triggered_by=request.user,
            )
            url = reverse("payments:finance_reconciliation") + "?" + urlencode({"run": run.pk})
            return redirect(url)
        report, status = None, 400
    else:
        form = ReconciliationForm()
        report, status = _requested_report(request), 200
    context = {"form": form, "report": report, "runs": reconciliation_runs_recent()}
    return render(request, "finance/reconciliation.html", context, status=status)
