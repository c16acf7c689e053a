"""Operators' pages for hosts and provisioning (group "operators", and superusers).

Hosts: the machines whose cards are rented out; a host in maintenance offers no free cards.
Provisioning: paid orders waiting for cards, orders to prepare by hand, readiness checks that
failed, the active rentals and those whose customer's diagnostics report shows a handover
problem. Every action is a POST; the provisioning services do the work
and refuse what the order's state does not allow.
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
from ..forms_ops import HostForm, PrepareForm, ResolveHandoverForm
from ..models import Host, Order, OrderStatus
from ..selectors_ops import host_orders, ops_host, ops_hosts, ops_order
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


@operator_required
@require_http_methods(["GET", "POST"])
def host_create(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "ops/host_form.html", {"form": HostForm()})
    form = HostForm(request.POST)
    if _save_host(form):
        messages.success(request, _("Host %(name)s is added.") % {"name": form.instance.name})
        return redirect("rental:ops_hosts")
    return render(request, "ops/host_form.html", {"form": form}, status=400)


def _host_or_404(host_id: int) -> Host:
    try:
        return ops_host(host_id=host_id)
    except Host.DoesNotExist:
        raise Http404(_("No such host.")) from None


@operator_required
@require_http_methods(["GET", "POST"])
def host_edit(request: HttpRequest, host_id: int) -> HttpResponse:
    host = _host_or_404(host_id)
    if request.method == "GET":
        form = HostForm(instance=host)
    else:
        form = HostForm(request.POST, instance=host)
        if _save_host(form):
            messages.success(request, _("Host %(name)s is saved.") % {"name": form.instance.name})
            return redirect("rental:ops_hosts")
        host = _host_or_404(host_id)  # as stored: the form changed the other copy
    context = {"form": form, "host": host, "orders": host_orders(host_id=host_id)}
    return render(
        request, "ops/host_form.html", context, status=200 if request.method == "GET" else 400
    )


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
