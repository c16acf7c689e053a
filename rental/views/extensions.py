"""The customer extends an active rental: choose 3, 7 or 30 days at today's price, then pay
(the payment page is the payments app's: payments:extension_pay)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from .. import selectors, selectors_extensions
from ..exceptions import RentalError
from ..forms_extensions import ExtensionForm
from ..models import Order
from ..services import extension_create

EXTEND_TEMPLATE = "rental/extend.html"


def _own_order(request: HttpRequest, order_id: int) -> Order:
    try:
        return selectors.customer_order(customer=request.user, order_id=order_id)
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None


def _render(request, order: Order, form: ExtensionForm, status: int = 200, error=None):
    extendable = selectors_extensions.order_extendable(order)
    context = {
        "order": order,
        "form": form,
        "extendable": extendable,
        "offers": selectors_extensions.extension_offers(order) if extendable else [],
        "pending": selectors_extensions.pending_extension(order),
        "error": error,
    }
    return render(request, EXTEND_TEMPLATE, context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def order_extend(request: HttpRequest, order_id: int) -> HttpResponse:
    """The durations with their price now and the new end; choosing one creates the extension
    (its price frozen) and leads to its payment."""
    order = _own_order(request, order_id)
    if request.method == "GET":
        return _render(request, order, ExtensionForm())
    form = ExtensionForm(request.POST)
    if not form.is_valid():
        return _render(request, order, form, status=400)
    try:
        extension = extension_create(
            order_id=order.pk,
            customer=request.user,
            duration_days=form.cleaned_data["duration_days"],
        )
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None
    except RentalError as exc:
        return _render(request, order, form, status=409, error=exc.message)
    return redirect("payments:extension_pay", extension_id=extension.pk)
