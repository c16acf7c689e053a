from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from . import selectors, services
from .exceptions import PriceUnavailable, RentalError
from .forms import OrderConfigurationForm
from .models import Duration, Order, Preparation

CONFIGURE_TEMPLATE = "rental/configure.html"
ORDERS_PER_PAGE = 25


@require_GET
def catalogue(request: HttpRequest) -> HttpResponse:
    return render(request, "rental/catalogue.html", {"gpu_models": list(selectors.catalogue())})


def _bind(data, catalogue) -> tuple[OrderConfigurationForm, services.Summary | None]:
    form = OrderConfigurationForm(data, catalogue=catalogue)
    summary = None
    if form.is_valid():
        try:
            summary = services.configuration_summary(configuration=form.configuration())
        except PriceUnavailable as exc:
            form.add_error("duration_days", exc.message)
    return form, summary


def _default_configuration(catalogue) -> dict[str, str]:
    return {
        "gpu_model": catalogue[0].slug if catalogue else "",
        "duration_days": str(Duration.SEVEN_DAYS.value),
        "lots": "1",
        "preparation": Preparation.UBUNTU.value,
    }


@require_GET
def configure(request: HttpRequest) -> HttpResponse:
    """The configurator; an htmx request gets only the live summary."""
    catalogue = list(selectors.catalogue())
    data = {**_default_configuration(catalogue), **request.GET.dict()}
    form, summary = _bind(data, catalogue)
    template = CONFIGURE_TEMPLATE + "#summary" if request.htmx else CONFIGURE_TEMPLATE
    return render(request, template, {"form": form, "summary": summary})


@require_GET
def review(request: HttpRequest) -> HttpResponse:
    """Exactly what will be charged; the configuration travels in the URL, so a visitor who
    signs up or logs in from here comes back to the same page with nothing retyped."""
    catalogue = list(selectors.catalogue())
    form, summary = _bind(request.GET, catalogue)
    if summary is None:
        return render(request, CONFIGURE_TEMPLATE, {"form": form, "summary": None}, status=400)
    return render(request, "rental/review.html", _review_context(request, form, summary))


def _review_context(request, form, summary, error: str | None = None) -> dict:
    review_url = reverse("rental:review") + "?" + urlencode(form.query_data())
    return {
        "form": form,
        "summary": summary,
        "review_url": review_url,
        "configure_url": reverse("rental:configure") + "?" + urlencode(form.query_data()),
        "auth_next": urlencode({"next": review_url}),
        "error": error,
    }


@require_POST
def confirm(request: HttpRequest) -> HttpResponse:
    catalogue = list(selectors.catalogue())
    form, summary = _bind(request.POST, catalogue)
    if summary is None:
        return render(request, CONFIGURE_TEMPLATE, {"form": form, "summary": None}, status=400)
    if not request.user.is_authenticated:
        review_url = reverse("rental:review") + "?" + urlencode(form.query_data())
        return redirect(reverse("account_login") + "?" + urlencode({"next": review_url}))
    try:
        order = services.order_create(customer=request.user, configuration=form.configuration())
    except RentalError as exc:
        context = _review_context(request, form, summary, error=exc.message)
        return render(request, "rental/review.html", context, status=409)
    messages.success(
        request,
        _("Order %(reference)s is placed and awaits payment.") % {"reference": order.reference},
    )
    return redirect("rental:order_detail", order_id=order.pk)


@login_required
@require_GET
def order_list(request: HttpRequest) -> HttpResponse:
    orders = selectors.customer_orders(customer=request.user)
    page = Paginator(orders, ORDERS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "rental/order_list.html", {"orders": page.object_list, "page": page})


def _own_order(request: HttpRequest, order_id: int) -> Order:
    try:
        return selectors.customer_order(customer=request.user, order_id=order_id)
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None


@login_required
@require_GET
def order_detail(request: HttpRequest, order_id: int) -> HttpResponse:
    return render(request, "rental/order_detail.html", {"order": _own_order(request, order_id)})


@login_required
@require_POST
def order_cancel(request: HttpRequest, order_id: int) -> HttpResponse:
    try:
        order = services.order_cancel_by_customer(order_id=order_id, customer=request.user)
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None
    except RentalError as exc:
        context = {"order": _own_order(request, order_id), "error": exc.message}
        return render(request, "rental/order_detail.html", context, status=409)
    messages.success(
        request,
        _("Order %(reference)s is cancelled and its lots are released.")
        % {"reference": order.reference},
    )
    return redirect("rental:order_detail", order_id=order.pk)
