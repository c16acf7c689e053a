"""The operators' queue: payments in review, stale declarations, reversed transfers.

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

from ...exceptions import PaymentError
from ...models import CryptoPayment
from ..forms import ReviewActionForm
from ..selectors.ops import ops_payment, ops_queue
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
# A payment whose confirmed transfer was reversed by the chain.
REVERSAL_ACTIONS: dict[str, Action] = {
    "write-off": (
        review.payment_write_off_reversed,
        gettext_lazy("Write off the reversed transfers"),
        gettext_lazy("The reversed transfers of payment %(reference)s are written off."),
    ),
}
ALL_ACTIONS = {**PAYMENT_ACTIONS, **REVERSAL_ACTIONS}


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


def _payment_actions(detail, bound=None) -> list[dict]:
    """The actions that fit the payment; a refused one stays on the page with its error."""
    actions = REVERSAL_ACTIONS if detail.reversed else PAYMENT_ACTIONS
    if bound and bound[0] not in actions:
        actions = {**actions, bound[0]: ALL_ACTIONS[bound[0]]}
    return _action_forms(
        actions,
        url_name="payments:ops_payment_action",
        object_id={"payment_id": detail.payment.pk},
        bound=bound,
    )


def _payment_or_404(payment_id: int):
    try:
        return ops_payment(payment_id=payment_id)
    except CryptoPayment.DoesNotExist:
        raise Http404(_("No such payment.")) from None


@operator_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    return render(request, "ops/queue.html", {"queue": ops_queue()})


@operator_required
@require_GET
def payment_detail(request: HttpRequest, payment_id: int) -> HttpResponse:
    detail = _payment_or_404(payment_id)
    context = {"detail": detail, "actions": _payment_actions(detail)}
    return render(request, "ops/payment_detail.html", context)


@operator_required
@require_POST
def payment_action(request: HttpRequest, payment_id: int, action: str) -> HttpResponse:
    if action not in ALL_ACTIONS:
        raise Http404(_("No such action."))
    service, _label, done = ALL_ACTIONS[action]
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
    detail = _payment_or_404(payment_id)
    context = {
        "detail": detail,
        "actions": _payment_actions(detail, bound=(action, form)),
        "failed_action": action,
    }
    return render(request, "ops/payment_detail.html", context, status=400)
