"""The operators' queue: payments in review, stale declarations, unmatched transfers.

For members of the "operators" group (and superusers) only: see `operator_required`. Every
action is a POST with a mandatory reason; the review services do the work and refuse what
the payment's state does not allow.
"""

from collections.abc import Callable

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import OPERATORS, role_required

from ..exceptions import PaymentError
from ..forms_ops import ReviewActionForm
from ..models import ChainTransfer, CryptoPayment
from ..selectors.ops import ops_payment, ops_queue, ops_transfer
from ..services import review

operator_required = role_required(OPERATORS)


# action in the URL → (service, button label, message once done)
Action = tuple[Callable, Promise, Promise]

PAYMENT_ACTIONS: dict[str, Action] = {
    "settle": (
        review.payment_mark_settled,
        gettext_lazy("Mark settled"),
        gettext_lazy("Payment %(reference)s is marked settled."),
    ),
    "credit": (
        review.payment_credit_balance,
        gettext_lazy("Credit what was received to the customer's balance"),
        gettext_lazy("What payment %(reference)s received is credited to the customer's balance."),
    ),
    "invalid": (
        review.payment_mark_invalid,
        gettext_lazy("Mark invalid"),
        gettext_lazy("Payment %(reference)s is marked invalid."),
    ),
}
TRANSFER_ACTIONS: dict[str, Action] = {
    "credit": (
        review.transfer_credit_balance,
        gettext_lazy("Credit to the customer's balance"),
        gettext_lazy("The transfer is credited to the customer's balance."),
    ),
    "invalid": (
        review.transfer_mark_invalid,
        gettext_lazy("Mark invalid"),
        gettext_lazy("The transfer is marked invalid."),
    ),
}


def _action_forms(
    actions: dict[str, Action],
    *,
    url_name: str,
    object_id: dict[str, int],
    bound: tuple[str, ReviewActionForm] | None = None,
) -> list[dict]:
    """One form per action, each with its own field ids; `bound` replaces one with errors."""
    forms = []
    for name, (_service, label, _done) in actions.items():
        form = ReviewActionForm(auto_id=f"id_{name}_%s")
        if bound and bound[0] == name:
            form = bound[1]
        url = reverse(url_name, kwargs={**object_id, "action": name})
        forms.append({"name": name, "label": label, "form": form, "url": url})
    return forms


def _payment_actions(payment_id: int, bound=None) -> list[dict]:
    return _action_forms(
        PAYMENT_ACTIONS,
        url_name="payments:ops_payment_action",
        object_id={"payment_id": payment_id},
        bound=bound,
    )


def _transfer_actions(transfer_id: int, detail, bound=None) -> list[dict]:
    """Without a payment there is no customer to credit: only "invalid" is offered."""
    actions = _action_forms(
        TRANSFER_ACTIONS,
        url_name="payments:ops_transfer_action",
        object_id={"transfer_id": transfer_id},
        bound=bound,
    )
    if detail.payment is None:
        actions = [action for action in actions if action["name"] != "credit"]
    return actions


def _payment_or_404(payment_id: int):
    try:
        return ops_payment(payment_id=payment_id)
    except CryptoPayment.DoesNotExist:
        raise Http404(_("No such payment.")) from None


def _transfer_or_404(transfer_id: int):
    try:
        return ops_transfer(transfer_id=transfer_id)
    except ChainTransfer.DoesNotExist:
        raise Http404(_("No such transfer.")) from None


@operator_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    return render(request, "ops/queue.html", {"queue": ops_queue()})


@operator_required
@require_GET
def payment_detail(request: HttpRequest, payment_id: int) -> HttpResponse:
    context = {"detail": _payment_or_404(payment_id), "actions": _payment_actions(payment_id)}
    return render(request, "ops/payment_detail.html", context)


@operator_required
@require_POST
def payment_action(request: HttpRequest, payment_id: int, action: str) -> HttpResponse:
    if action not in PAYMENT_ACTIONS:
        raise Http404(_("No such action."))
    service, _label, done = PAYMENT_ACTIONS[action]
    form = ReviewActionForm(request.POST, auto_id=f"id_{action}_%s")
    if form.is_valid():
        try:
            payment = service(
                payment_id=payment_id, actor=request.user, reason=form.cleaned_data["reason"]
            )
        except CryptoPayment.DoesNotExist:
            raise Http404(_("No such payment.")) from None
        except PaymentError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, done % {"reference": payment.reference})
            return redirect("payments:ops_payment", payment_id=payment.pk)
    context = {
        "detail": _payment_or_404(payment_id),
        "actions": _payment_actions(payment_id, bound=(action, form)),
        "failed_action": action,
    }
    return render(request, "ops/payment_detail.html", context, status=400)


@operator_required
@require_GET
def transfer_detail(request: HttpRequest, transfer_id: int) -> HttpResponse:
    detail = _transfer_or_404(transfer_id)
    context = {"detail": detail, "actions": _transfer_actions(transfer_id, detail)}
    return render(request, "ops/transfer_detail.html", context)


@operator_required
@require_POST
def transfer_action(request: HttpRequest, transfer_id: int, action: str) -> HttpResponse:
    if action not in TRANSFER_ACTIONS:
        raise Http404(_("No such action."))
    service, _label, done = TRANSFER_ACTIONS[action]
    form = ReviewActionForm(request.POST, auto_id=f"id_{action}_%s")
    if form.is_valid():
        try:
            transfer = service(
                transfer_id=transfer_id, actor=request.user, reason=form.cleaned_data["reason"]
            )
        except ChainTransfer.DoesNotExist:
            raise Http404(_("No such transfer.")) from None
        except PaymentError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, str(done))
            return redirect("payments:ops_transfer", transfer_id=transfer.pk)
    detail = _transfer_or_404(transfer_id)
    context = {
        "detail": detail,
        "actions": _transfer_actions(transfer_id, detail, bound=(action, form)),
        "failed_action": action,
    }
    return render(request, "ops/transfer_detail.html", context, status=400)
