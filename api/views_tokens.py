"""The account's API tokens page: create (the token shown once), list, revoke."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.fields import ascii_int

from .forms import ApiTokenForm
from .models import ApiToken
from .tokens import owner_tokens, token_create, token_revoke

TEMPLATE = "api/tokens.html"


def _render(request, form, status=200, created=None) -> HttpResponse:
    context = {"form": form, "tokens": list(owner_tokens(owner=request.user)), "created": created}
    return render(request, TEMPLATE, context, status=status)


@login_required
@require_GET
def token_list(request: HttpRequest) -> HttpResponse:
    return _render(request, ApiTokenForm())


@login_required
@require_POST
def token_new(request: HttpRequest) -> HttpResponse:
    """The new token is on this response only: it is never stored, so there is no redirect."""
    form = ApiTokenForm(request.POST)
    if not form.is_valid():
        return _render(request, form, status=400)
    created = token_create(
        owner=request.user,
        name=form.cleaned_data["name"],
        scopes=form.cleaned_data["scopes"],
        expires_at=form.expires_at(),
    )
    return _render(request, ApiTokenForm(), created=created)


@login_required
@require_POST
def token_revoke_view(request: HttpRequest, token_id: str) -> HttpResponse:
    number = ascii_int(token_id)
    try:
        if number is None:
            raise ApiToken.DoesNotExist
        token = token_revoke(owner=request.user, token_id=number)
    except ApiToken.DoesNotExist:
        raise Http404(_("No such API token in your account.")) from None
    messages.success(request, _("The token “%(name)s” is revoked.") % {"name": token.name})
    return redirect("api_tokens:list")
