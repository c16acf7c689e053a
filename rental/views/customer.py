import secrets
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.messages import get_messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.fields import ascii_int
from accounts.kept_layout import render_in_kept_layout
from accounts.roles import FINANCE, OPERATORS, has_role
from accounts.ssh_keys import stored_ssh_key

from .. import selectors, services, stock
from ..exceptions import PriceUnavailable, RentalError
from ..forms import OrderConfigurationForm, OrderSshKeyForm
from ..models import ACCESS_STATUSES, Duration, Order, OrderStatus, Preparation
from ..order_page import cached_content, render_content
from ..services.provisioning import order_set_ssh_key

CATALOGUE_TEMPLATE = "rental/catalogue.html"
CONFIGURE_TEMPLATE = "rental/configure.html"
ORDER_TEMPLATE = "rental/order_detail.html"
ORDER_STATUS_TEMPLATE = "rental/_order_status.html"
ORDERS_PER_PAGE = 25
# While these last, the order page asks for its status every few seconds.
POLLED_STATUSES = frozenset({OrderStatus.PAID, OrderStatus.PROVISIONING})


# Where a cached page for a customer carries the CSRF token; each response gets its own token
# there. Random per process: no text on the page can hold it by chance or by design.
_TOKEN_SLOT = "csrf-slot-" + secrets.token_hex(16)


@require_GET
def catalogue(request: HttpRequest) -> HttpResponse:
    """The catalogue, cached in the process on the stock version (rental/stock.py).

    The page is the same for everyone with the same language and roles but for the CSRF
    token, so, unless there is a message to show or a query string, the whole page is cached
    per language and audience (anonymous; a customer with their staff roles: the navigation
    differs) and a customer's response gets its own token in the slot. Anonymous visitors get
    no token at all (the layout's language switch is a link for them). Otherwise the models
    and prices alone come from the cache."""
    stock_version = stock.version()  # read before anything the cache is built from
    language = get_language()
    if request.GET or len(get_messages(request)):
        return render(request, CATALOGUE_TEMPLATE, _catalogue_context(language, stock_version))
    user = request.user
    audience = (
        ("customer", has_role(user, FINANCE), has_role(user, OPERATORS))
        if user.is_authenticated
        else ("anonymous",)
    )
    body = stock.cached(
        ("catalogue page", language, request.path, audience),
        lambda: (
            render(
                request,
                CATALOGUE_TEMPLATE,
                {**_catalogue_context(language, stock_version), "csrf_token": _TOKEN_SLOT},
            ).content
        ),
        stock_version,
    )
    if user.is_authenticated:
        body = body.replace(_TOKEN_SLOT.encode(), get_token(request).encode())
    return HttpResponse(body)


def _catalogue_context(language: str, stock_version: int | None) -> dict:
    return {"catalogue": stock.cached(("catalogue", language), _catalogue_html, stock_version)}


def _catalogue_html() -> str:
    return render_to_string("rental/_catalogue.html", {"gpu_models": selectors.catalogue()})


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


def _kept_catalogue() -> list:
    """selectors.catalogue() kept in the process on the stock version (rental/stock.py), as
    the catalogue page is: the same models, prices and lots available for every request until
    a committed change of stock. Read-only: the forms and summaries only read them."""
    return stock.cached(("catalogue models",), selectors.catalogue, stock.version())


@require_GET
def configure(request: HttpRequest) -> HttpResponse:
    """The configurator; an htmx request gets only the live summary."""
    catalogue = _kept_catalogue()
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
    orders = selectors.customer_order_pages(customer=request.user)
    page = Paginator(orders, ORDERS_PER_PAGE).get_page(ascii_int(request.GET.get("page")))
    return render(request, "rental/order_list.html", {"orders": page.object_list, "page": page})


def _own_order(request: HttpRequest, order_id: int) -> Order:
    try:
        return selectors.customer_order(customer=request.user, order_id=order_id)
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None


# The order's hosts are shown with their access state from these statuses on (the SSH command
# only while active).
HOST_STATES_SHOWN = frozenset({OrderStatus.PROVISIONING, *ACCESS_STATUSES})


def order_host_access(order: Order) -> list[selectors.HostAccess]:
    """Each host's access and its state (rental.selectors.order_access), once there are hosts."""
    return selectors.order_access(order) if order.status in HOST_STATES_SHOWN else []


def status_version(order: Order, access: list[selectors.HostAccess]) -> str:
    """Changes whenever what the status area shows may have changed (every write to the order
    bumps `updated_at`; every change of a host's access is in `access`): the polling page
    sends it back and gets 204 while it is the same."""
    version = f"{order.status}-{order.updated_at.timestamp():.6f}"
    hosts = selectors.access_version(access)
    return f"{version}-{hosts}" if hosts else version


def is_polling(order: Order, access: list[selectors.HostAccess]) -> bool:
    """While the order is paid or being provisioned, and while the worker revokes a host's
    access (an operator's work on a host prepared by hand can take days: no polling)."""
    return order.status in POLLED_STATUSES or any(host.is_working for host in access)


def _order_context(request: HttpRequest, order: Order, **extra) -> dict:
    ssh_key = stored_ssh_key(order.ssh_public_key)
    if "ssh_key_form" not in extra and order.accepts_ssh_key:
        extra["ssh_key_form"] = OrderSshKeyForm(customer=request.user)
    access = extra.pop("access", None)
    if access is None:
        access = order_host_access(order)
    return {
        "order": order,
        "access": access,
        "ssh_key": ssh_key,
        "ssh_key_missing": order.accepts_ssh_key and ssh_key is None,
        # Every host is verified by logging in as the customer's own account (worker-managed).
        "access_checked_as_tenant": bool(access) and all(h.worker_managed for h in access),
        # Hosts whose access has a known state (cards allocated before tenancies have none).
        "access_states_known": any(host.state for host in access),
        "polling": is_polling(order, access),
        "status_version": status_version(order, access),
        **extra,
    }


def render_order_page(
    request: HttpRequest, order: Order, status: int = 200, **extra
) -> HttpResponse:
    """The order page, also for another app's POST that failed (payments: cancel, pay)."""
    context = _order_context(request, order, **extra)
    content = render_content(request, context)
    return render(request, ORDER_TEMPLATE, {"order": order, "content": content}, status=status)


@login_required
@require_GET
def order_detail(request: HttpRequest, order_id: int) -> HttpResponse:
    """The order page; its content comes from this worker's copy while the state it shows is
    the same (rental.order_page), and so does the layout around it (accounts.kept_layout)."""
    order = _own_order(request, order_id)
    access = order_host_access(order)
    content = cached_content(
        request, order, access, lambda: _order_context(request, order, access=access)
    )
    return render_in_kept_layout(
        request, ORDER_TEMPLATE, {"order": order}, content, key=(order.reference,)
    )


@login_required
@require_GET
def order_status(request: HttpRequest, order_id: int) -> HttpResponse:
    """The status and next step of the order page, which polls it while the order is paid or
    being provisioned and while the worker revokes a host's access; 204 (nothing to swap)
    while nothing changed since `since` (the order and each host's access)."""
    order = _own_order(request, order_id)
    access = order_host_access(order)
    if request.GET.get("since") == status_version(order, access):
        return HttpResponse(status=204)
    return render(request, ORDER_STATUS_TEMPLATE, _order_context(request, order, access=access))


@login_required
@require_POST
def order_ssh_key(request: HttpRequest, order_id: int) -> HttpResponse:
    """Give or replace the order's SSH public key until its hosts are prepared."""
    form = OrderSshKeyForm(request.POST, customer=request.user)
    if not form.is_valid():
        order = _own_order(request, order_id)
        return render_order_page(request, order, status=400, ssh_key_form=form)
    try:
        order = order_set_ssh_key(
            order_id=order_id,
            customer=request.user,
            key_text=form.cleaned_data["ssh_public_key"].line,
            save_on_account=form.cleaned_data["save_on_account"],
        )
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None
    except ValidationError as exc:  # the form checks the key first; kept for safety
        form.add_error("ssh_public_key", exc)
        order = _own_order(request, order_id)
        return render_order_page(request, order, status=400, ssh_key_form=form)
    except RentalError as exc:
        order = _own_order(request, order_id)
        return render_order_page(request, order, status=409, error=exc.message)
    messages.success(
        request, _("Your SSH key is saved on order %(reference)s.") % {"reference": order.reference}
    )
    return redirect("rental:order_detail", order_id=order.pk)


@require_GET
def help_page(request: HttpRequest) -> HttpResponse:
    """The guide's answers in one page: lots and cards, preparations, crypto confirmations,
    holds and expiry, reminders and the hard stop, the pilot, and where to write."""
    return render(
        request,
        "help.html",
        {
            "support_email": settings.SUPPORT_EMAIL,
            "hold_minutes": settings.ORDER_HOLD_MINUTES,
            "expiry_minutes": settings.PAYMENT_EXPIRY_MINUTES,
            "monitor_hours": settings.PAYMENT_MONITOR_HOURS,
            "early_end_waiting_hours": settings.EARLY_END_WAITING_HOURS,
            "withdrawal_min_usd": settings.WITHDRAWAL_MIN_USD,
        },
    )
