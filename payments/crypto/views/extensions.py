"""The customer pays (or cancels) an extension of a rental: from the USD balance, or in
stablecoins through the standard payment page. Every extension is looked up through its
owner: another customer's id answers 404."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from rental.exceptions import RentalError
from rental.models import OrderExtension

from ...chain.forms import StablecoinForm
from ..selectors.extensions import extension_pay_view
from ..services import extensions

PAY_TEMPLATE = "payments/extension_pay.html"


def _no_extension() -> Http404:
    return Http404(_("No such extension in your account."))


def _render(request, extension_id: int, status: int = 200, **extra) -> HttpResponse:
    try:
        view = extension_pay_view(customer=request.user, extension_id=extension_id)
    except OrderExtension.DoesNotExist:
        raise _no_extension() from None
    context = {"view": view, "crypto_form": StablecoinForm(), **extra}
    return render(request, PAY_TEMPLATE, context, status=status)


@login_required
@require_GET
def extension_pay(request: HttpRequest, extension_id: int) -> HttpResponse:
    return _render(request, extension_id)


@login_required
@require_POST
def extension_pay_balance(request: HttpRequest, extension_id: int) -> HttpResponse:
    try:
        extension = extensions.extension_pay_from_balance(
            extension_id=extension_id, customer=request.user
        )
    except OrderExtension.DoesNotExist:
        raise _no_extension() from None
    except RentalError as exc:
        return _render(request, extension_id, status=409, error=exc.message)
    messages.success(
        request,
        _("Extension %(reference)s is paid from your USD balance.")
        % {"reference": extension.reference},
    )
    return redirect("rental:order_detail", order_id=extension.order_id)


@login_required
@require_POST
def extension_pay_crypto(request: HttpRequest, extension_id: int) -> HttpResponse:
    form = StablecoinForm(request.POST)
    if not form.is_valid():
        return _render(request, extension_id, status=400, crypto_form=form)
    choice = form.cleaned_data["stablecoin"]
    try:
        payment = extensions.extension_open_crypto_payment(
            extension_id=extension_id,
            customer=request.user,
            network_key=choice.network_key,
            asset_symbol=choice.asset_symbol,
        )
    except OrderExtension.DoesNotExist:
        raise _no_extension() from None
    except RentalError as exc:
        return _render(request, extension_id, status=409, crypto_form=form, error=exc.message)
    return redirect("payments:payment_detail", payment_id=payment.pk)


@login_required
@require_POST
def extension_cancel(request: HttpRequest, extension_id: int) -> HttpResponse:
    try:
        extension = extensions.extension_cancel(extension_id=extension_id, customer=request.user)
    except OrderExtension.DoesNotExist:
        raise _no_extension() from None
    except RentalError as exc:
        return _render(request, extension_id, status=409, error=exc.message)
    messages.success(
        request, _("Extension %(reference)s is cancelled.") % {"reference": extension.reference}
    )
    return redirect("rental:order_detail", order_id=extension.order_id)
