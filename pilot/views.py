"""The pilot's pages and endpoints; the services do the work.

Customers (their own orders only: another customer's id is 404): the two kit downloads, the
report file upload and the decision form of the order page, and the configurator pre-filled
from the order. diagnose.py: the report upload with the kit's token (no session, no cookie,
hence no CSRF). Operators: a report's JSON as it was sent.
"""

from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.translation import get_language, override
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import OPERATORS, role_required
from rental.models import Order
from rental.selectors import customer_order
from rental.views.customer import render_order_page

from . import selectors
from .exceptions import PilotError, ReportTooLarge, TokenMissing
from .forms import DecisionForm, ReportUploadForm
from .models import PILOT_STATUSES, DecisionKind, DiagnosticsReport
from .report import ReportRejected
from .services import decisions, kits, reports
from .upload_handlers import ReportFileUploadHandler

# ------------------------------------------------------------------ the kits


def _own_order(request: HttpRequest, order_id: int) -> Order:
    try:
        return customer_order(customer=request.user, order_id=order_id)
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None


def _download(request: HttpRequest, order_id: int, build) -> HttpResponse:
    try:
        kit = build(order_id=order_id, customer=request.user)
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None
    except PilotError as exc:
        order = _own_order(request, order_id)
        return render_order_page(request, order, status=exc.status, error=exc.message)
    response = HttpResponse(kit.content, content_type="application/zip")
    response["Content-Disposition"] = content_disposition_header(True, kit.filename)
    return response


@login_required
@require_GET
def kit_diagnostics(request: HttpRequest, order_id: int) -> HttpResponse:
    """The diagnostics kit; each download carries a new upload token (the last one stops)."""
    return _download(request, order_id, kits.kit_diagnostics)


@login_required
@require_GET
def kit_pilot_folder(request: HttpRequest, order_id: int) -> HttpResponse:
    return _download(request, order_id, kits.kit_pilot_folder)


# ------------------------------------------------------------------ diagnose.py --upload


def _json_error(exc_or_message, status: int, language: str | None = None) -> JsonResponse:
    with override(language or get_language()):
        return JsonResponse({"error": str(exc_or_message)}, status=status)


def _bearer(request: HttpRequest) -> str | None:
    scheme, _space, token = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


@csrf_exempt  # no session and no cookie: the kit's token is the only credential
def report_upload_api(request: HttpRequest, order_id: int) -> JsonResponse:
    """POST the report JSON with `Authorization: Bearer <token>`: 201 with where to see it;
    400 malformed or invalid, 401 no or dead token, 403 another order's token or order closed,
    409 too many reports, 413 too large. Never reads more than the limit plus one byte."""
    if request.method != "POST":
        response = _json_error(_("Send the report with POST."), 405)
        response["Allow"] = "POST"
        return response
    limit = reports.max_report_bytes()
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        return _json_error(ReportTooLarge(limit_bytes=limit), 413)
    token = _bearer(request)
    if token is None:
        return _json_error(TokenMissing(), TokenMissing.status)
    raw = request.read(limit + 1)
    if len(raw) > limit:
        return _json_error(ReportTooLarge(limit_bytes=limit), 413)
    try:
        report = reports.report_upload_with_token(order_id=order_id, token=token, raw=raw)
    except PilotError as exc:
        return _json_error(exc.message, exc.status, exc.language)
    except ReportRejected as exc:
        return _json_error(getattr(exc, "message", None) or str(exc), 400)
    order = report.order
    page = settings.SITE_URL.rstrip("/") + reverse(
        "rental:order_detail", kwargs={"order_id": order.pk}
    )
    with override(order.customer.language):
        body = {
            "id": report.pk,
            "order": order.reference,
            "step_reached": report.step_reached,
            "first_error": report.first_error_step or None,
            "problems": report.problems,
            "page": page,
            "message": _("Report received for order %(reference)s: see it on %(page)s")
            % {"reference": order.reference, "page": page},
        }
    return JsonResponse(body, status=201)


# ------------------------------------------------------------------ the order page's forms


@csrf_exempt  # to set the upload handler first; the CSRF check runs just after (below)
@login_required
@require_POST
def report_upload_page(request: HttpRequest, order_id: int) -> HttpResponse:
    handler = ReportFileUploadHandler(request, limit=reports.max_report_bytes())
    request.upload_handlers = [handler]
    return _report_upload_page(request, order_id, handler)


@csrf_protect
def _report_upload_page(
    request: HttpRequest, order_id: int, handler: ReportFileUploadHandler
) -> HttpResponse:
    order = _own_order(request, order_id)
    form = ReportUploadForm(request.POST, request.FILES)
    error = None
    if handler.too_large:
        error = ReportTooLarge(limit_bytes=handler.limit).message
    elif form.is_valid():
        try:
            reports.report_upload_by_customer(
                order_id=order.pk, customer=request.user, raw=form.cleaned_data["report"].read()
            )
        except Order.DoesNotExist:
            raise Http404(_("No such order in your account.")) from None
        except PilotError as exc:
            error = exc.message
        except ReportRejected as exc:
            error = getattr(exc, "message", None) or str(exc)
        else:
            messages.success(request, _("The report is stored on the order."))
            return redirect(
                reverse("rental:order_detail", kwargs={"order_id": order.pk}) + "#pilot"
            )
    return _order_page_with_error(
        request, order, status=400, error=error or "", report_form=form, report_error=error
    )


def _order_page_with_error(request, order: Order, *, status: int, error: str, **forms):
    """The order page with a refusal: in the pilot section, or above everything when the order
    has none (never paid)."""
    if order.status not in PILOT_STATUSES:
        forms["error"] = error
    return render_order_page(request, order, status=status, **forms)


def _configurator_url(order: Order) -> str:
    """The configurator pre-filled with what this order rented."""
    query = {
        "gpu_model": order.gpu_model.slug,
        "duration_days": order.duration_days,
        "lots": order.lots,
        "preparation": order.preparation,
    }
    if order.custom_preparation:
        query["custom_preparation"] = order.custom_preparation
    return reverse("rental:configure") + "?" + urlencode(query)


@login_required
@require_POST
def decision_record(request: HttpRequest, order_id: int) -> HttpResponse:
    order = _own_order(request, order_id)
    choices = selectors.order_pilot(order).report_choices
    form = DecisionForm(request.POST, reports=choices)
    if not form.is_valid():
        return render_order_page(request, order, status=400, decision_form=form)
    try:
        decision = decisions.decision_record(
            order_id=order.pk,
            customer=request.user,
            kind=form.cleaned_data["kind"],
            motivation=form.cleaned_data["motivation"],
            report_id=form.cleaned_data["report"],
        )
    except Order.DoesNotExist:
        raise Http404(_("No such order in your account.")) from None
    except PilotError as exc:
        form.add_error(None, exc.message)
        return _order_page_with_error(
            request, order, status=exc.status, error=exc.message, decision_form=form
        )
    if decision.kind == DecisionKind.REVISE_CONFIGURATION:
        messages.success(
            request,
            _(
                "Decision recorded. The configurator starts from order %(reference)s: change what "
                "the pilot showed."
            )
            % {"reference": order.reference},
        )
        return redirect(_configurator_url(order))
    messages.success(request, _("Decision recorded in the order's timeline."))
    return redirect(reverse("rental:order_detail", kwargs={"order_id": order.pk}) + "#pilot")


@login_required
@require_GET
def configure_from_order(request: HttpRequest, order_id: int) -> HttpResponse:
    """ "Revise the configuration": the configurator, pre-filled from this order."""
    return redirect(_configurator_url(_own_order(request, order_id)))


# ------------------------------------------------------------------ operators


@role_required(OPERATORS)
@require_GET
def ops_report_json(request: HttpRequest, report_id: int) -> JsonResponse:
    """The report as it was sent (validated JSON)."""
    try:
        report = selectors.report_document(report_id=report_id)
    except DiagnosticsReport.DoesNotExist:
        raise Http404(_("No such report.")) from None
    return JsonResponse(report.document, json_dumps_params={"ensure_ascii": False, "indent": 2})
