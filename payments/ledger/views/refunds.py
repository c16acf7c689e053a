"""Ending an order early with its refund, for operators (group "operators", and superusers).

The form is shown on the operators' order page (payments_tags.ops_end_early) and on a page of
its own, which also shows a refused form again with its errors. The case, the hours and the
amount are computed when the page is shown; the amount travels with the form and the service
refuses when it changed meanwhile (an hour went by), so the operator confirms what is posted.
"""

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from accounts.roles import OPERATORS, role_required
from rental.exceptions import RentalError
from rental.models import Order

from ...formats import usd_text
from ..forms import EndEarlyForm
from ..selectors.refunds import end_early_check, order_refund
from ..services.refunds import RefundQuoteChanged, order_end_early_with_refund

operator_required = role_required(OPERATORS)
TEMPLATE = "payments/ops_end_early.html"


def _order_or_404(order_id: int) -> Order:
    order = Order.objects.select_related("customer").filter(pk=order_id).first()
    if order is None:
        raise Http404(_("No such order."))
    return order


def _page(request, order: Order, form: EndEarlyForm, *, status: int = 200) -> HttpResponse:
    context = {
        "order": order,
        "check": form.check,
        "form": form,
        "summary": order_refund(order=order),
        "waiting_hours": settings.EARLY_END_WAITING_HOURS,
    }
    return render(request, TEMPLATE, context, status=status)


@operator_required
@require_http_methods(["GET", "POST"])
def order_end_early(request: HttpRequest, order_id: int) -> HttpResponse:
    order = _order_or_404(order_id)
    check = end_early_check(order, timezone.now())
    if request.method == "GET":
        return _page(request, order, EndEarlyForm(check=check))
    form = EndEarlyForm(request.POST, check=check)
    if not form.is_valid():
        return _page(request, order, form, status=400)
    try:
        outcome = order_end_early_with_refund(
            order_id=order.pk,
            actor=request.user,
            reason=form.cleaned_data["reason"],
            host_failed=form.states_host_failed,
            expected_amount=form.cleaned_data["expected_amount"],
        )
    except Order.DoesNotExist:
        raise Http404(_("No such order.")) from None
    except RefundQuoteChanged as exc:
        data = request.POST.copy()
        data["expected_amount"] = str(exc.amount)  # confirming again confirms the new amount
        form = EndEarlyForm(data, check=end_early_check(order, timezone.now()))
        form.is_valid()
        form.add_error(None, exc.message)
        return _page(request, order, form, status=409)
    except RentalError as exc:
        form.add_error(None, exc.message)
        return _page(request, Order.objects.get(pk=order.pk), form, status=400)
    if outcome.created:
        messages.success(
            request,
            _(
                "Order %(reference)s is ended early: %(hours)d hours (%(amount)s USD) are "
                "credited to the customer's balance and the cards are released."
            )
            % {
                "reference": order.reference,
                "hours": outcome.hours,
                "amount": usd_text(outcome.amount),
            },
        )
    else:
        messages.info(
            request,
            _("Order %(reference)s was already ended early; nothing more was credited.")
            % {"reference": order.reference},
        )
    return redirect("rental:ops_order", order_id=order.pk)
