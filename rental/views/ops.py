"""Operators' pages for hosts and provisioning (group "operators", and superusers).

Hosts: the machines whose cards are rented out, with their actions (the host key, the host
check, drain, maintenance, return); only an available host offers free cards.
Fleet: every card of every host, free, allocated, being revoked or quarantined.
Provisioning: paid orders waiting for cards, orders to prepare by hand, readiness checks that
failed, the active rentals and those whose customer's diagnostics report shows a handover
problem. Teardown: the tenancies in front of an operator (a teardown to retry or to confirm by
hand, a preparation step, a provisioning that failed).
Every action is a POST that calls one service; the services do the work and refuse what the
state does not allow (shown with HTTP 400).
"""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import OPERATORS, role_required

from .. import selectors_ops
from ..exceptions import RentalError
from ..forms_ops import (
    ConfirmHostKeyForm,
    ConfirmTeardownForm,
    HostForm,
    OperatorStepForm,
    PrepareForm,
    ResolveHandoverForm,
)
from ..hosts import services as host_services
from ..hosts import tenancy as tenancy_services
from ..hosts.models import Tenancy
from ..models import Host, Order, OrderStatus
from ..selectors_ops import ops_host, ops_hosts, ops_order
from ..services import handover, provisioning

operator_required = role_required(OPERATORS)

# ------------------------------------------------------------------------------ hosts


@operator_required
@require_GET
def host_list(request: HttpRequest) -> HttpResponse:
    return render(request, "ops/hosts.html", {"hosts": ops_hosts()})


def _save_host(form: HostForm) -> bool:
    """Save a valid form through the service; its refusal becomes a form error."""
    if not form.is_valid():
        return False
    try:
        provisioning.host_save(host=form.save(commit=False))
    except RentalError as exc:
        form.add_error(None, exc.message)
        return False
    except ValidationError as exc:  # a rule checked again under the lock (a name taken since)
        form.add_error(None, exc)
        return False
    return True


def _fetch_key_after_save(request: HttpRequest, host: Host) -> None:
    """A worker-managed host's key is asked for as soon as it is saved; a host that does not
    answer yet is saved all the same (the operator fetches again from its page)."""
    try:
        host = host_services.host_fetch_key(host_id=host.pk)
    except RentalError as exc:
        messages.warning(
            request,
            _("The host key could not be fetched: %(error)s. Fetch it again from this page.")
            % {"error": exc.message},
        )
        return
    messages.info(
        request,
        _(
            "The host offers the key %(fingerprint)s: compare it with the fingerprint read on "
            "the host's console, then confirm it."
        )
        % {"fingerprint": selectors_ops.key_fingerprint(host.host_key_offered)},
    )


@operator_required
@require_http_methods(["GET", "POST"])
def host_create(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "ops/host_form.html", {"form": HostForm()})
    form = HostForm(request.POST)
    if _save_host(form):
        host = form.instance
        messages.success(request, _("Host %(name)s is added.") % {"name": host.name})
        if host.worker_managed:
            _fetch_key_after_save(request, host)
            return redirect("rental:ops_host", host_id=host.pk)
        return redirect("rental:ops_hosts")
    return render(request, "ops/host_form.html", {"form": form}, status=400)


def _host_page(
    request: HttpRequest,
    host_id: int,
    *,
    form: HostForm | None = None,
    confirm_form: ConfirmHostKeyForm | None = None,
    failed_action: str = "",
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    """The host as stored, its actions and history; `form` is the edit form as posted."""
    try:
        detail = selectors_ops.ops_host_detail(host_id=host_id)
    except Host.DoesNotExist:
        raise Http404(_("No such host.")) from None
    context = {
        "form": form or HostForm(instance=detail.host),
        "host": detail.host,
        "detail": detail,
        "orders": detail.orders,
        "confirm_form": confirm_form or ConfirmHostKeyForm(),
        "failed_action": failed_action,
        "error": error,
    }
    return render(request, "ops/host_form.html", context, status=status)


@operator_required
@require_http_methods(["GET", "POST"])
def host_edit(request: HttpRequest, host_id: int) -> HttpResponse:
    if request.method == "GET":
        return _host_page(request, host_id)
    try:
        host = ops_host(host_id=host_id)
    except Host.DoesNotExist:
        raise Http404(_("No such host.")) from None
    form = HostForm(request.POST, instance=host)
    if _save_host(form):
        messages.success(request, _("Host %(name)s is saved.") % {"name": form.instance.name})
        return redirect("rental:ops_hosts")
    # The page shows the host as stored: the form changed its own copy.
    return _host_page(request, host_id, form=form, failed_action="edit", status=400)


def _fetch_key(request: HttpRequest, host_id: int, form: forms.Form) -> None:
    host = host_services.host_fetch_key(host_id=host_id)
    messages.success(
        request,
        _("The host offers the key %(fingerprint)s: compare it before confirming it.")
        % {"fingerprint": selectors_ops.key_fingerprint(host.host_key_offered)},
    )


def _confirm_key(request: HttpRequest, host_id: int, form: forms.Form) -> None:
    host = host_services.host_confirm_key(
        host_id=host_id, actor=request.user, fingerprint=form.cleaned_data["fingerprint"]
    )
    messages.success(
        request,
        _("The host key %(fingerprint)s is pinned: the worker talks to this host only with it.")
        % {"fingerprint": selectors_ops.key_fingerprint(host.host_key)},
    )


def _check(request: HttpRequest, host_id: int, form: forms.Form) -> None:
    # Only a passing host check returns a repaired (or new) host to the stock.
    make_available = host_services.host_check_queue(host_id=host_id, actor=request.user)
    if make_available:
        text = _("The host check is queued: if it passes, the host becomes available.")
    else:
        text = _("The host check is queued: its result shows here in a minute.")
    messages.success(request, text)


def _drain(request: HttpRequest, host_id: int, form: forms.Form) -> None:
    host = host_services.host_drain(host_id=host_id, actor=request.user)
    messages.success(
        request,
        _("Host %(name)s is draining: no new orders, the current rentals finish.")
        % {"name": host.name},
    )


def _maintenance(request: HttpRequest, host_id: int, form: forms.Form) -> None:
    host = host_services.host_set_maintenance(host_id=host_id, actor=request.user)
    messages.success(
        request,
        _("Host %(name)s is in maintenance: it offers no free cards.") % {"name": host.name},
    )


def _return(request: HttpRequest, host_id: int, form: forms.Form) -> None:
    host = host_services.host_return_manual(host_id=host_id, actor=request.user)
    messages.success(
        request,
        _("Host %(name)s is available: its free cards are offered again.") % {"name": host.name},
    )


# action in the URL → (its form, what it does once the form is valid)
HOST_ACTIONS = {
    "fetch-key": (forms.Form, _fetch_key),
    "confirm-key": (ConfirmHostKeyForm, _confirm_key),
    "check": (forms.Form, _check),
    "drain": (forms.Form, _drain),
    "maintenance": (forms.Form, _maintenance),
    "return": (forms.Form, _return),
}


@operator_required
@require_POST
def host_action(request: HttpRequest, host_id: int, action: str) -> HttpResponse:
    if action not in HOST_ACTIONS:
        raise Http404(_("No such action."))
    form_class, perform = HOST_ACTIONS[action]
    form = form_class(request.POST)
    confirm_form = form if action == "confirm-key" else None
    if not form.is_valid():
        return _host_page(
            request, host_id, confirm_form=confirm_form, failed_action=action, status=400
        )
    try:
        perform(request, host_id, form)
    except Host.DoesNotExist:
        raise Http404(_("No such host.")) from None
    except RentalError as exc:
        return _host_page(
            request,
            host_id,
            confirm_form=confirm_form,
            failed_action=action,
            error=str(exc.message),
            status=400,
        )
    return redirect("rental:ops_host", host_id=host_id)


# ------------------------------------------------------------------------------ fleet


@operator_required
@require_GET
def fleet(request: HttpRequest) -> HttpResponse:
    return render(request, "ops/fleet.html", {"fleet": selectors_ops.fleet()})


# ----------------------------------------------------------------------- provisioning


@operator_required
@require_GET
def provisioning_queue(request: HttpRequest) -> HttpResponse:
    return render(request, "ops/provisioning.html", {"queue": selectors_ops.provisioning_queue()})


def _order_or_404(order_id: int):
    try:
        return ops_order(order_id=order_id)
    except Order.DoesNotExist:
        raise Http404(_("No such order.")) from None


def _order_page(
    request: HttpRequest,
    order_id: int,
    *,
    prepare_form: PrepareForm | None = None,
    resolve_form: ResolveHandoverForm | None = None,
    failed_action: str = "",
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    detail = _order_or_404(order_id)
    if prepare_form is None:  # marking again starts from the details given last time
        prepare_form = PrepareForm(
            initial={
                "access_notes": detail.order.access_notes,
                "key_fingerprint": detail.ssh_key_fingerprint,
            }
        )
    context = {
        "detail": detail,
        "prepare_form": prepare_form,
        "resolve_form": resolve_form or ResolveHandoverForm(),
        "failed_action": failed_action,
        "error": error,
    }
    return render(request, "ops/order_detail.html", context, status=status)


@operator_required
@require_GET
def order_detail(request: HttpRequest, order_id: int) -> HttpResponse:
    return _order_page(request, order_id)


def _prepare(request: HttpRequest, order_id: int, form: forms.Form) -> None:
    order = provisioning.order_mark_prepared(
        order_id=order_id,
        actor=request.user,
        access_notes=form.cleaned_data["access_notes"],
        key_fingerprint=form.cleaned_data["key_fingerprint"],
    )
    messages.success(
        request,
        _("Order %(reference)s is marked prepared; the worker is checking SSH on its hosts.")
        % {"reference": order.reference},
    )


def _allocate(request: HttpRequest, order_id: int, form: forms.Form) -> None:
    order = provisioning.order_allocate(order_id=order_id, actor=request.user)
    if order.status == OrderStatus.PAID:
        messages.warning(
            request,
            _("Still not enough free cards: %(detail)s")
            % {"detail": order.provisioning_issue_detail},
        )
    else:
        messages.success(
            request, _("Cards allocated to order %(reference)s.") % {"reference": order.reference}
        )


def _recheck(request: HttpRequest, order_id: int, form: forms.Form) -> None:
    order = provisioning.order_recheck_readiness(order_id=order_id, actor=request.user)
    messages.success(
        request,
        _("The worker is checking SSH again for order %(reference)s.")
        % {"reference": order.reference},
    )


def _resolve_handover(request: HttpRequest, order_id: int, form: forms.Form) -> None:
    order = handover.order_resolve_handover_problem(
        order_id=order_id, actor=request.user, note=form.cleaned_data["note"]
    )
    messages.success(
        request,
        _("The handover problem of order %(reference)s is resolved.")
        % {"reference": order.reference},
    )


# action in the URL → (its form, what it does once the form is valid)
ACTIONS = {
    "prepare": (PrepareForm, _prepare),
    "allocate": (forms.Form, _allocate),
    "recheck": (forms.Form, _recheck),
    "resolve-handover": (ResolveHandoverForm, _resolve_handover),
}


@operator_required
@require_POST
def order_action(request: HttpRequest, order_id: int, action: str) -> HttpResponse:
    if action not in ACTIONS:
        raise Http404(_("No such action."))
    form_class, perform = ACTIONS[action]
    form = form_class(request.POST)
    forms_shown = {
        "prepare_form": form if action == "prepare" else None,
        "resolve_form": form if action == "resolve-handover" else None,
    }
    if not form.is_valid():
        return _order_page(request, order_id, **forms_shown, failed_action=action, status=400)
    try:
        perform(request, order_id, form)
    except Order.DoesNotExist:
        raise Http404(_("No such order.")) from None
    except RentalError as exc:
        return _order_page(
            request,
            order_id,
            **forms_shown,
            failed_action=action,
            error=str(exc.message),
            status=400,
        )
    return redirect("rental:ops_order", order_id=order_id)


# --------------------------------------------------------------------------- teardown


def _teardown_page(
    request: HttpRequest,
    *,
    failed: tuple[int, str] | None = None,
    form: forms.Form | None = None,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    """The teardown queue; `failed` (tenancy id, action) with its bound `form` and the
    service's `error` are shown at that tenancy."""
    context = {
        "queue": selectors_ops.teardown_queue(),
        "failed_tenancy": failed[0] if failed else None,
        "failed_action": failed[1] if failed else "",
        "failed_form": form,
        "error": error,
        "teardown_form": ConfirmTeardownForm(),
        "step_form": OperatorStepForm(),
    }
    return render(request, "ops/teardown.html", context, status=status)


@operator_required
@require_GET
def teardown_queue(request: HttpRequest) -> HttpResponse:
    return _teardown_page(request)


def _retry(request: HttpRequest, tenancy: Tenancy, form: forms.Form) -> None:
    tenancy_services.tenancy_retry(tenancy_id=tenancy.pk, actor=request.user)
    names = {"account": tenancy.account, "host": tenancy.host.name}
    if tenancy.host.worker_managed:
        messages.success(
            request, _("%(account)s on %(host)s is tried again by the worker.") % names
        )
    else:
        messages.success(
            request, _("%(account)s on %(host)s waits for its teardown by hand again.") % names
        )


def _confirm_teardown(request: HttpRequest, tenancy: Tenancy, form: forms.Form) -> None:
    tenancy_services.tenancy_confirm_teardown(
        tenancy_id=tenancy.pk, actor=request.user, confirmed=form.confirmed()
    )
    messages.success(
        request,
        _("The teardown of %(account)s on %(host)s is confirmed: its cards are back in stock.")
        % {"account": tenancy.account, "host": tenancy.host.name},
    )


def _confirm_step(request: HttpRequest, tenancy: Tenancy, form: forms.Form) -> None:
    tenancy_services.tenancy_confirm_operator_step(
        tenancy_id=tenancy.pk, actor=request.user, note=form.cleaned_data["note"]
    )
    messages.success(
        request,
        _("The step on %(host)s is recorded: the worker now verifies the access as the tenant.")
        % {"host": tenancy.host.name},
    )


# action in the URL → (its form, what it does once the form is valid)
TENANCY_ACTIONS = {
    "retry": (forms.Form, _retry),
    "confirm-teardown": (ConfirmTeardownForm, _confirm_teardown),
    "confirm-step": (OperatorStepForm, _confirm_step),
}


@operator_required
@require_POST
def tenancy_action(request: HttpRequest, tenancy_id: int, action: str) -> HttpResponse:
    if action not in TENANCY_ACTIONS:
        raise Http404(_("No such action."))
    try:
        tenancy = selectors_ops.ops_tenancy(tenancy_id=tenancy_id)
    except Tenancy.DoesNotExist:
        raise Http404(_("No such tenancy.")) from None
    form_class, perform = TENANCY_ACTIONS[action]
    form = form_class(request.POST)
    failed = (tenancy.pk, action)
    if not form.is_valid():
        return _teardown_page(request, failed=failed, form=form, status=400)
    try:
        perform(request, tenancy, form)
    except Tenancy.DoesNotExist:
        raise Http404(_("No such tenancy.")) from None
    except RentalError as exc:
        return _teardown_page(request, failed=failed, form=form, error=str(exc.message), status=400)
    return redirect("rental:ops_teardown")
