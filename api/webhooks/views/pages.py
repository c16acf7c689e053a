"""The account's webhook pages: list and create, one endpoint with its delivery log,
enable/disable, delete, rotate its secret, ping it, redeliver. Thin: parse, call one service,
render."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts.fields import ascii_int

from .. import selectors
from ..exceptions import InvalidEndpoint, WebhookError
from ..forms import EnabledForm, EndpointForm
from ..models import WebhookDelivery, WebhookEndpoint
from ..services import endpoints as services
from ..services.replay import endpoint_ping as ping_service
from ..services.rotation import endpoint_rotate_secret as rotate_service

LOG_PAGE_SIZE = 25
# The session key under which a new endpoint's secret waits for its one showing.
NEW_SECRET = "webhooks:new-secret"


def _list(request: HttpRequest, form: EndpointForm, status: int = 200) -> HttpResponse:
    context = {"endpoints": selectors.endpoints_with_counts(request.user), "form": form}
    return TemplateResponse(request, "api/webhooks/endpoint_list.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def endpoint_list(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _list(request, EndpointForm())
    form = EndpointForm(request.POST)
    if not form.is_valid():
        return _list(request, form, status=400)
    try:
        endpoint = services.endpoint_create(
            owner=request.user, url=form.cleaned_data["url"], events=form.cleaned_data["events"]
        )
    except InvalidEndpoint as exc:
        form.add_error(exc.field, exc.message)
        return _list(request, form, status=400)
    except WebhookError as exc:
        form.add_error(None, exc.message)
        return _list(request, form, status=400)
    request.session[NEW_SECRET] = {"endpoint": endpoint.pk, "secret": endpoint.secret}
    return redirect("webhooks:endpoint_detail", endpoint_id=endpoint.pk)


@login_required
@require_POST
def endpoint_rotate_secret(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    try:
        endpoint = rotate_service(endpoint_id=endpoint.pk, owner=request.user)
    except WebhookEndpoint.DoesNotExist:
        raise Http404 from None
    request.session[NEW_SECRET] = {
        "endpoint": endpoint.pk,
        "secret": endpoint.secret,
        "rotated": True,
    }
    return redirect("webhooks:endpoint_detail", endpoint_id=endpoint.pk)


@login_required
@require_POST
def endpoint_ping(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    try:
        ping_service(endpoint_id=endpoint.pk, owner=request.user)
    except WebhookEndpoint.DoesNotExist:
        raise Http404 from None
    except WebhookError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("A test ping is queued: see it in the delivery log."))
    return redirect("webhooks:endpoint_detail", endpoint_id=endpoint.pk)


def _endpoint(request: HttpRequest, endpoint_id: int) -> WebhookEndpoint:
    try:
        return selectors.customer_endpoint(request.user, endpoint_id)
    except WebhookEndpoint.DoesNotExist:
        raise Http404 from None


@login_required
@require_http_methods(["GET"])
def endpoint_detail(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    shown = request.session.get(NEW_SECRET) or {}
    secret, rotated = None, False
    if shown.get("endpoint") == endpoint.pk:
        secret, rotated = shown["secret"], shown.get("rotated", False)
        del request.session[NEW_SECRET]
    paginator = Paginator(selectors.endpoint_deliveries(endpoint), LOG_PAGE_SIZE)
    page = paginator.get_page(ascii_int(request.GET.get("page")) or 1)
    context = {
        "endpoint": endpoint,
        "secret": secret,
        "rotated": rotated,
        "now": timezone.now(),
        "page": page,
        "deliveries": page.object_list,
    }
    return TemplateResponse(request, "api/webhooks/endpoint_detail.html", context)


@login_required
@require_POST
def endpoint_enabled(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    form = EnabledForm(request.POST)
    if not form.is_valid():
        return HttpResponse(_("Choose to enable or to disable the endpoint."), status=400)
    services.endpoint_set_enabled(
        endpoint_id=endpoint.pk, owner=request.user, enabled=form.cleaned_data["enabled"]
    )
    if form.cleaned_data["enabled"]:
        messages.success(request, _("The endpoint is enabled."))
    else:
        messages.success(request, _("The endpoint is disabled: no event is sent to it."))
    return redirect("webhooks:endpoint_detail", endpoint_id=endpoint.pk)


@login_required
@require_POST
def endpoint_delete(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    services.endpoint_delete(endpoint_id=endpoint.pk, owner=request.user)
    messages.success(request, _("The endpoint is deleted."))
    return redirect("webhooks:endpoint_list")


@login_required
@require_POST
def delivery_redeliver(request: HttpRequest, delivery_id: int) -> HttpResponse:
    try:
        delivery = services.delivery_redeliver(delivery_id=delivery_id, owner=request.user)
    except WebhookDelivery.DoesNotExist:
        raise Http404 from None
    except WebhookError as exc:
        endpoint_id = (
            WebhookDelivery.objects.filter(pk=delivery_id).values_list("endpoint_id", flat=True)
        ).get()
        messages.error(request, exc.message)
        return redirect("webhooks:endpoint_detail", endpoint_id=endpoint_id)
    messages.success(request, _("The event is queued for delivery again."))
    return redirect("webhooks:endpoint_detail", endpoint_id=delivery.endpoint_id)
