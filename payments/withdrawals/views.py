"""Withdrawals: the customer asks and follows; finance approves, rejects, enters the hash.

Every withdrawal a customer asks for is looked up through its owner (another customer's id
answers 404); the finance pages are for the finance group only.
"""

from decimal import Decimal

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.fields import ascii_int
from accounts.roles import FINANCE, role_required

from ..exceptions import IdempotencyConflict, PaymentError
from ..ledger.selectors.statement import customer_balance_account
from ..models import Withdrawal
from . import services as service
from .forms import ApproveForm, HashForm, RejectForm, TakeBackForm, WithdrawForm
from .selectors import (
    QUEUE_FILTERS,
    customer_withdrawal_view,
    finance_withdrawal,
    finance_withdrawal_counts,
    finance_withdrawals,
    queue_views,
    withdrawal_preview,
)

FORM_TEMPLATE = "payments/withdraw.html"
CONFIRM_TEMPLATE = "payments/withdraw_confirm.html"
DETAIL_TEMPLATE = "payments/withdrawal_detail.html"
FINANCE_DETAIL_TEMPLATE = "finance/withdrawal_detail.html"
QUEUE_PER_PAGE = 50

finance_required = role_required(FINANCE)


def _no_withdrawal() -> Http404:
    return Http404(_("No such withdrawal in your account."))


def _balance(request: HttpRequest) -> Decimal:
    account = customer_balance_account(customer=request.user)
    return account.balance if account else Decimal("0.00")


# ---------------------------------------------------------------------------- customer


@login_required
@require_http_methods(["GET", "POST"])
def withdraw(request: HttpRequest) -> HttpResponse:
    """GET: the form. POST: with step=confirm (the form's button), what will happen, to
    confirm; with step=send (the confirmation's button), the request itself; with step=edit,
    the form again with its values."""
    balance = _balance(request)
    if request.method == "GET":
        return render(request, FORM_TEMPLATE, {"form": WithdrawForm(balance=balance)})
    form = WithdrawForm(request.POST, balance=balance)
    step = request.POST.get("step")
    if step == "edit":
        return render(
            request, FORM_TEMPLATE, {"form": form}, status=200 if form.is_valid() else 400
        )
    if not form.is_valid():
        return render(request, FORM_TEMPLATE, {"form": form}, status=400)
    choice = form.cleaned_data["stablecoin"]
    if step != "send":
        preview = withdrawal_preview(
            network_key=choice.network_key,
            asset_symbol=choice.asset_symbol,
            amount_usd=form.cleaned_data["amount"],
            balance=balance,
        )
        return render(
            request, CONFIRM_TEMPLATE, {"form": form, "choice": choice, "preview": preview}
        )
    try:
        withdrawal = service.withdrawal_request(
            customer=request.user,
            amount_usd=form.cleaned_data["amount"],
            network=choice.network_key,
            asset=choice.asset_symbol,
            to_address=form.cleaned_data["to_address"],
            request_key=str(form.cleaned_data["request_key"]),
        )
    except service.WithdrawalAmountError as exc:
        form.add_error("amount", exc.message)
    except service.WithdrawalAddressError as exc:
        form.add_error("to_address", exc.message)
    except service.WithdrawalNetworkUnavailable as exc:
        form.add_error("stablecoin", exc.message)
    except IdempotencyConflict as exc:
        form.add_error(None, exc.message)
    else:
        messages.success(
            request,
            _("Withdrawal %(reference)s is requested: the amount is held from your balance.")
            % {"reference": withdrawal.reference},
        )
        return redirect("payments:withdrawal_detail", withdrawal_id=withdrawal.pk)
    return render(request, FORM_TEMPLATE, {"form": form}, status=400)


@login_required
@require_GET
def withdrawal_detail(request: HttpRequest, withdrawal_id: int) -> HttpResponse:
    try:
        view = customer_withdrawal_view(customer=request.user, withdrawal_id=withdrawal_id)
    except Withdrawal.DoesNotExist:
        raise _no_withdrawal() from None
    return render(request, DETAIL_TEMPLATE, {"view": view})


@login_required
@require_GET
def withdrawal_status(request: HttpRequest, withdrawal_id: int) -> HttpResponse:
    """The status partial, polled by the withdrawal page while the withdrawal is pending."""
    try:
        view = customer_withdrawal_view(customer=request.user, withdrawal_id=withdrawal_id)
    except Withdrawal.DoesNotExist:
        raise _no_withdrawal() from None
    return render(request, DETAIL_TEMPLATE + "#status", {"view": view})


# ---------------------------------------------------------------------------- finance


@finance_required
@require_GET
def finance_queue(request: HttpRequest) -> HttpResponse:
    show = request.GET.get("show", "pending")
    if show not in QUEUE_FILTERS:
        show = "pending"
    page = Paginator(finance_withdrawals(show=show), QUEUE_PER_PAGE).get_page(
        ascii_int(request.GET.get("page"))
    )
    context = {
        "page": page,
        "views": queue_views(page.object_list),
        "show": show,
        "counts": finance_withdrawal_counts(),
    }
    return render(request, "finance/withdrawals.html", context)


def _finance_page(request, withdrawal_id: int, *, status: int = 200, error: str = "", **forms):
    try:
        detail = finance_withdrawal(withdrawal_id=withdrawal_id)
    except Withdrawal.DoesNotExist:
        raise Http404(_("No such withdrawal.")) from None
    context = {
        "detail": detail,
        "view": detail.view,
        "error": error,
        "approve_form": forms.get("approve_form") or ApproveForm(step_up_user=request.user),
        "reject_form": forms.get("reject_form") or RejectForm(),
        "hash_form": forms.get("hash_form") or HashForm(),
        "take_back_form": forms.get("take_back_form") or TakeBackForm(),
    }
    return render(request, FINANCE_DETAIL_TEMPLATE, context, status=status)


@finance_required
@require_GET
def finance_detail(request: HttpRequest, withdrawal_id: int) -> HttpResponse:
    return _finance_page(request, withdrawal_id)


def _approve(request, withdrawal_id, data):
    return service.withdrawal_approve(withdrawal_id=withdrawal_id, actor=request.user)


def _reject(request, withdrawal_id, data):
    return service.withdrawal_reject(
        withdrawal_id=withdrawal_id, actor=request.user, reason=data["reason"]
    )


def _hash(request, withdrawal_id, data):
    return service.withdrawal_enter_hash(
        withdrawal_id=withdrawal_id, actor=request.user, tx_hash=data["tx_hash"]
    )


def _take_back(request, withdrawal_id, data):
    return service.withdrawal_take_hash_back(
        withdrawal_id=withdrawal_id, actor=request.user, reason=data["reason"]
    )


# action → (its form, the form's name on the page, the service call with the cleaned data)
ACTIONS = {
    "approve": (ApproveForm, "approve_form", _approve),
    "reject": (RejectForm, "reject_form", _reject),
    "hash": (HashForm, "hash_form", _hash),
    "take-back": (TakeBackForm, "take_back_form", _take_back),
}
DONE_MESSAGES = {
    "approve": gettext_lazy(
        "Withdrawal %(reference)s is approved: send it from your wallet, then enter the "
        "transaction hash."
    ),
    "reject": gettext_lazy(
        "Withdrawal %(reference)s is rejected; the amount is back on the balance."
    ),
    "hash": gettext_lazy(
        "The hash of withdrawal %(reference)s is entered; the worker checks it on chain."
    ),
    "take-back": gettext_lazy("The hash of withdrawal %(reference)s is taken back."),
}


@finance_required
@require_POST
def finance_action(request: HttpRequest, withdrawal_id: int, action: str) -> HttpResponse:
    if action == "check":
        try:
            service.withdrawal_check_soon(withdrawal_id=withdrawal_id)
        except Withdrawal.DoesNotExist:
            raise Http404(_("No such withdrawal.")) from None
        except PaymentError as exc:
            return _finance_page(request, withdrawal_id, status=409, error=exc.message)
        messages.success(request, _("The worker looks at the transaction again now."))
        return redirect("payments:finance_withdrawal", withdrawal_id=withdrawal_id)
    if action not in ACTIONS:
        raise Http404(_("No such action."))
    form_class, name, act = ACTIONS[action]
    kwargs = {"step_up_user": request.user} if form_class is ApproveForm else {}
    form = form_class(request.POST, **kwargs)
    if not form.is_valid():
        return _finance_page(request, withdrawal_id, status=400, **{name: form})
    try:
        withdrawal = act(request, withdrawal_id, form.cleaned_data)
    except Withdrawal.DoesNotExist:
        raise Http404(_("No such withdrawal.")) from None
    except service.WithdrawalHashError as exc:
        form.add_error("tx_hash", exc.message)
        return _finance_page(request, withdrawal_id, status=400, **{name: form})
    except PaymentError as exc:
        return _finance_page(request, withdrawal_id, status=409, error=exc.message)
    messages.success(request, DONE_MESSAGES[action] % {"reference": withdrawal.reference})
    return redirect("payments:finance_withdrawal", withdrawal_id=withdrawal.pk)
