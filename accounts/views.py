from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST
from django.views.i18n import set_language as django_set_language

from . import services


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    return render(request, "account/overview.html")


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """Django's language switch, which also remembers the choice on the account."""
    response = django_set_language(request)
    if request.user.is_authenticated:
        services.user_set_language(user=request.user, language=request.POST.get("language", ""))
    return response
