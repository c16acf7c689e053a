"""The customer's receipts: the list, one receipt as a printable page and as a PDF.

A receipt is looked up through its owner: another customer's number answers 404, like a
number never issued. The receipt itself (and its PDF) is in the language it was issued in;
the page around it (navigation, language switch, footer) follows the visitor's.
"""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from accounts.fields import ascii_int

from ...models import Receipt
from ..selectors.receipts import (
    customer_extension_receipt,
    customer_order_receipt,
    customer_receipt,
    customer_receipt_pages,
    receipt_document,
)

RECEIPTS_PAGE_SIZE = 25


@login_required
@require_GET
def receipt_list(request: HttpRequest) -> HttpResponse:
    order_id = ascii_int(request.GET.get("order"))
    receipts = customer_receipt_pages(customer=request.user, order_id=order_id)
    page = Paginator(receipts, RECEIPTS_PAGE_SIZE).get_page(ascii_int(request.GET.get("page")))
    return TemplateResponse(
        request,
        "payments/receipt_list.html",
        {"page": page, "receipts": page.object_list, "order_id": order_id},
    )


def _own_receipt(request: HttpRequest, number: int) -> Receipt:
    try:
        return customer_receipt(customer=request.user, number=number)
    except Receipt.DoesNotExist:
        raise Http404(_("No such receipt in your account.")) from None


@login_required
@require_GET
def receipt_detail(request: HttpRequest, number: int) -> HttpResponse:
    receipt = _own_receipt(request, number)
    # The document's texts in the receipt's language; the template switches to it ({% language %})
    # only around the receipt, so the site's header and footer stay in the visitor's.
    with translation.override(receipt.language):
        document = receipt_document(receipt)
    return TemplateResponse(request, "payments/receipt.html", {"doc": document})


@login_required
@require_GET
def receipt_pdf(request: HttpRequest, number: int) -> HttpResponse:
    receipt = _own_receipt(request, number)
    # fpdf2 (with Pillow and fontTools) loads in half a second: only where a PDF is asked for.
    from ..receipts_pdf import receipt_pdf as draw

    with translation.override(receipt.language):
        document = receipt_document(receipt)
        content = draw(document)
    response = HttpResponse(content, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{document.filename}"'
    return response


@login_required
@require_GET
def order_receipt(request: HttpRequest, order_id: int) -> HttpResponse:
    """The receipt of the customer's paid order (the order page links here)."""
    try:
        receipt = customer_order_receipt(customer=request.user, order_id=order_id)
    except Receipt.DoesNotExist:
        raise Http404(_("No receipt for this order in your account.")) from None
    return redirect("payments:receipt", number=receipt.number)


@login_required
@require_GET
def extension_receipt(request: HttpRequest, extension_id: int) -> HttpResponse:
    """The receipt of the customer's paid extension (the order page links here)."""
    try:
        receipt = customer_extension_receipt(customer=request.user, extension_id=extension_id)
    except Receipt.DoesNotExist:
        raise Http404(_("No receipt for this extension in your account.")) from None
    return redirect("payments:receipt", number=receipt.number)
