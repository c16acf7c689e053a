"""The customer's payment history: crypto payments and balance movements, newest first."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from accounts.fields import ascii_int

from ..selectors.history import (
    customer_movements,
    customer_payments,
    movement_rows,
    payment_rows,
)

HISTORY_PAGE_SIZE = 50


@login_required
@require_GET
def history(request: HttpRequest) -> HttpResponse:
    payments = Paginator(customer_payments(customer=request.user), HISTORY_PAGE_SIZE).get_page(
        ascii_int(request.GET.get("payments"))
    )
    movements = Paginator(customer_movements(customer=request.user), HISTORY_PAGE_SIZE).get_page(
        ascii_int(request.GET.get("movements"))
    )
    context = {
        "payments_page": payments,
        "payments": payment_rows(payments.object_list),
        "movements_page": movements,
        "movements": movement_rows(movements.object_list),
    }
    return TemplateResponse(request, "payments/history.html", context)
