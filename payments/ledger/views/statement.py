"""The customer's balance page: statement and CSV."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from accounts.fields import ascii_int

from .. import exports
from ..selectors.statement import (
    customer_statement,
    customer_statement_account,
    customer_statement_pages,
    statement_rows,
)

STATEMENT_PAGE_SIZE = 50


@login_required
@require_GET
def statement(request: HttpRequest) -> HttpResponse:
    account = customer_statement_account(customer=request.user)
    count = account.entry_count if account else 0
    entries = customer_statement_pages(customer=request.user, count=count)
    paginator = Paginator(entries, STATEMENT_PAGE_SIZE)
    # Newest page first by default: the most recent movements are what a customer looks for.
    page = paginator.get_page(ascii_int(request.GET.get("page")) or paginator.num_pages)
    return TemplateResponse(
        request,
        "payments/statement.html",
        {
            "page": page,
            "entries": page.object_list,
            "rows": statement_rows(page.object_list),
            "account": account,
        },
    )


@login_required
@require_GET
def statement_csv(request: HttpRequest) -> StreamingHttpResponse:
    return exports.statement_csv(customer_statement(customer=request.user).iterator(chunk_size=500))
