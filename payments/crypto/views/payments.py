"""The customer's crypto payments: choose a stablecoin, pay, follow the status, declare.

Every payment is looked up through its owner: another customer's id answers 404.
"""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template import Context
from django.template.loader import get_template
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.kept_layout import csrf_token_once, render_in_kept_layout
from rental.models import Order
from rental.selectors import customer_order
from rental.views.customer import render_order_page

from ...chain.forms import StablecoinForm
from ...exceptions import PaymentError
from ...models import CryptoPayment
from ..forms import DeclareForm, TopUpForm
from ..selectors.payment_page import customer_payment_view, payment_page_key
from ..services.payments import (
    TopUpTooSmall,
    payment_create_for_order,
    payment_create_top_up,
    payment_declare,
)

PAGE_TEMPLATE = "payments/payment_detail.html"
# The page's content, with its partials (the status the page polls).
CONTENT_TEMPLATE = "payments/_payment_content.html"


def _no_payment() -> Http404:
    return Http404(_("No such payment in your account."))


def _no_order() -> Http404:
    return Http404(_("No such order in your account."))


@login_required
@require_POST
def pay_crypto(request: HttpRequest, order_id: int) -> HttpResponse:
    """Start (or reopen) the order's stablecoin payment, then show it."""
    form = StablecoinForm(request.POST)
    status, error = 400, None
    if form.is_valid():
        choice = form.cleaned_data["stablecoin"]
        try:
            payment = payment_create_for_order(
                order_id=order_id,
                customer=request.user,
                network_key=choice.network_key,
                asset_symbol=choice.asset_symbol,
            )
        except Order.DoesNotExist:
            raise _no_order() from None
        except PaymentError as exc:
            status, error = 409, exc.message
        else:
            return redirect("payments:payment_detail", payment_id=payment.pk)
    try:
        order = customer_order(customer=request.user, order_id=order_id)
    except Order.DoesNotExist:
        raise _no_order() from None
    return render_order_page(request, order, status=status, crypto_form=form, error=error)


@login_required
@require_GET
def payment_detail(request: HttpRequest, payment_id: int) -> HttpResponse:
    try:
        page = customer_payment_view(customer=request.user, payment_id=payment_id)
    except CryptoPayment.DoesNotExist:
        raise _no_payment() from None
    key = payment_page_key(
        page, language=get_language(), htmx=bool(request.htmx), shown=request.GET.get("shown")
    )
    # The content is kept per state it shows ({% kept %}), the layout around it per what the
    # layout shows (accounts.kept_layout); one CSRF token for both. A plain Context: the
    # content uses no context processor's value.
    context = {
        "page": page,
        "declare_form": DeclareForm(),
        "kept_key": key,
        "request": request,
        "csrf_token": csrf_token_once(request),
    }
    content = get_template(CONTENT_TEMPLATE).template.render(Context(context))
    return render_in_kept_layout(
        request, PAGE_TEMPLATE, {"page": page}, content, key=(page.payment.reference,)
    )


@login_required
@require_GET
def payment_status(request: HttpRequest, payment_id: int) -> HttpResponse:
    """The status partial, polled by the payment page every few seconds."""
    try:
        progress = customer_payment_view(customer=request.user, payment_id=payment_id)
    except CryptoPayment.DoesNotExist:
        raise _no_payment() from None
    return render(request, CONTENT_TEMPLATE + "#status", {"progress": progress})


@login_required
@require_POST
def declare(request: HttpRequest, payment_id: int) -> HttpResponse:
    """Record "I have paid" once; a repeat keeps the first declaration."""
    form = DeclareForm(request.POST)
    if not form.is_valid():
        try:
            page = customer_payment_view(customer=request.user, payment_id=payment_id)
        except CryptoPayment.DoesNotExist:
            raise _no_payment() from None
        return render(request, PAGE_TEMPLATE, {"page": page, "declare_form": form}, status=400)
    try:
        payment_declare(
            payment_id=payment_id, customer=request.user, tx_hash=form.cleaned_data["tx_hash"]
        )
    except CryptoPayment.DoesNotExist:
        raise _no_payment() from None
    except PaymentError as exc:
        page = customer_payment_view(customer=request.user, payment_id=payment_id)
        context = {"page": page, "declare_form": form, "declare_error": exc.message}
        return render(request, PAGE_TEMPLATE, context, status=409)
    return redirect("payments:payment_detail", payment_id=payment_id)


@login_required
@require_http_methods(["GET", "POST"])
def top_up(request: HttpRequest) -> HttpResponse:
    """Top up the USD balance in a stablecoin: the amount and the asset, then the payment."""
    if request.method == "GET":
        return render(request, "payments/top_up.html", {"form": TopUpForm()})
    form = TopUpForm(request.POST)
    status = 400
    if form.is_valid():
        choice = form.cleaned_data["stablecoin"]
        try:
            payment = payment_create_top_up(
                customer=request.user,
                amount_usd=form.cleaned_data["amount"],
                network_key=choice.network_key,
                asset_symbol=choice.asset_symbol,
            )
        except TopUpTooSmall as exc:
            form.add_error("amount", exc.message)
        except PaymentError as exc:
            form.add_error(None, exc.message)
            status = 409
        else:
            return redirect("payments:payment_detail", payment_id=payment.pk)
    return render(request, "payments/top_up.html", {"form": form}, status=status)
