"""Paying an order from the balance, and cancelling an order with money on its payments."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from rental.exceptions import RentalError
from rental.models import Order
from rental.selectors import customer_order
from rental.views.customer import render_order_page

from ..services import order_payments
from ..services.balance_payment import balance_pay_order


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
