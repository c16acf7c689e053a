"""The customer's balance: statement, CSV, and paying an order from the balance."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.fields import ascii_int
from rental.exceptions import RentalError
from rental.models import Order
from rental.selectors import customer_order
from rental.views.customer import render_order_page

from ..csv_export import csv_download, text_cell
from ..selectors.statement import customer_balance_account, customer_statement, statement_rows
from ..selectors.withdrawals import customer_withdrawals_pending
from ..services import order_payments
from ..services.balance import balance_pay_order

STATEMENT_PAGE_SIZE = 50


@login_required
@require_GET
def statement(request: HttpRequest) -> HttpResponse:
    entries = customer_statement(customer=request.user)
    paginator = Paginator(entries, STATEMENT_PAGE_SIZE)
    # Newest page first by default: the most recent movements are what a customer looks for.
    page = paginator.get_page(ascii_int(request.GET.get("page")) or paginator.num_pages)
    account = customer_balance_account(customer=request.user)
    return TemplateResponse(
        request,
        "payments/statement.html",
        {
            "page": page,
            "entries": page.object_list,
            "rows": statement_rows(page.object_list),
            "account": account,
            "withdrawals_pending": customer_withdrawals_pending(customer=request.user),
        },
    )


STATEMENT_CSV_HEADER = ["date", "kind", "memo", "order", "amount_usd", "running_balance_usd"]


@login_required
@require_GET
def statement_csv(request: HttpRequest) -> StreamingHttpResponse:
    entries = customer_statement(customer=request.user).iterator(chunk_size=500)
    rows = (
        [
            entry.transaction.created_at.isoformat(),
            entry.transaction.kind,
            text_cell(entry.transaction.memo),
            entry.transaction.order.reference if entry.transaction.order else "",
            f"{entry.amount:.2f}",
            f"{entry.running_balance:.2f}",
        ]
        for entry in entries
    )
    return csv_download(header=STATEMENT_CSV_HEADER, rows=rows, filename="balance-statement.csv")


@login_required
@require_POST
def pay_with_balance(request: HttpRequest, order_id: int) -> HttpResponse:
    try:
        order = balance_pay_order(order_id=order_id, customer=request.user)
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None
    except RentalError as exc:
        messages.error(request, exc.message)
        return redirect("rental:order_detail", order_id=order_id)
    messages.success(
        request,
        _("Order %(reference)s is paid from your USD balance.") % {"reference": order.reference},
    )
    return redirect("rental:order_detail", order_id=order.pk)


@login_required
@require_POST
def order_cancel(request: HttpRequest, order_id: int) -> HttpResponse:
    """Cancel an order awaiting payment. When money already arrived on its payments, the
    customer first sees what happens to it and confirms (`money_confirmed=yes`)."""
    confirmed = request.POST.get("money_confirmed") == "yes"
    try:
        order = order_payments.order_cancel(
            order_id=order_id, customer=request.user, money_confirmed=confirmed
        )
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None
    except order_payments.CancelNeedsConfirmation as exc:
        order = customer_order(customer=request.user, order_id=order_id)
        context = {
            "order": order,
            "money": order_payments.order_money_received(order=order),
            "message": exc.message,
        }
        return TemplateResponse(request, "payments/order_cancel_confirm.html", context, status=409)
    except RentalError as exc:
        order = customer_order(customer=request.user, order_id=order_id)
        return render_order_page(request, order, status=409, error=exc.message)
    messages.success(
        request,
        _("Order %(reference)s is cancelled and its lots are released.")
        % {"reference": order.reference},
    )
    return redirect("rental:order_detail", order_id=order.pk)
