from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.i18n import set_language as django_set_language

from . import selectors, services
from .forms import BillingDetailsForm, SshKeyForm
from .ssh_keys import stored_ssh_key


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    form = SshKeyForm(required=False, initial={"ssh_public_key": request.user.ssh_public_key})
    return _render_overview(request, form)


@login_required
@require_POST
def ssh_key(request: HttpRequest) -> HttpResponse:
    """Save, replace or (when emptied) remove the customer's SSH public key."""
    form = SshKeyForm(request.POST, required=False)
    if not form.is_valid():
        return _render_overview(request, form, status=400)
    key = form.cleaned_data["ssh_public_key"]
    services.user_set_ssh_key(user=request.user, text=key.line if key else "")
    if key:
        messages.success(request, _("Your SSH key is saved."))
    else:
        messages.success(request, _("Your saved SSH key is removed."))
    return redirect("accounts:overview")


def _render_overview(request: HttpRequest, form: SshKeyForm, status: int = 200) -> HttpResponse:
    context = {"ssh_key_form": form, "saved_key": stored_ssh_key(request.user.ssh_public_key)}
    return render(request, "account/overview.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def billing(request: HttpRequest) -> HttpResponse:
    """The optional billing details printed on receipts issued from now on."""
    if request.method == "POST":
        form = BillingDetailsForm(request.POST)
        if not form.is_valid():
            return render(request, "account/billing.html", {"form": form}, status=400)
        services.user_set_billing_details(user=request.user, **form.cleaned_data)
        messages.success(request, _("Your billing details are saved for the next receipts."))
        return redirect("accounts:billing")
    details = selectors.billing_details(user=request.user)
    initial = (
        {name: getattr(details, name) for name in BillingDetailsForm.base_fields} if details else {}
    )
    return render(request, "account/billing.html", {"form": BillingDetailsForm(initial=initial)})


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """Django's language switch, which also remembers the choice on the account."""
    response = django_set_language(request)
    if request.user.is_authenticated:
        services.user_set_language(user=request.user, language=request.POST.get("language", ""))
    return response


@require_GET
def switch_language(request: HttpRequest, language: str) -> HttpResponse:
    """The anonymous visitor's language switch, a link: sets the language cookie and goes back
    to `next` (a path of this site; else the catalogue). A link carries no CSRF token, so the
    anonymous layout has nothing per visitor and can be cached whole (the catalogue); it
    changes nothing but the visitor's own cookie. Logged-in customers use the form, which also
    stores the choice on the account."""
    if language not in dict(settings.LANGUAGES):
        raise Http404
    next_url = request.GET.get("next", "")
    if not next_url.startswith("/") or not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = "/"
    response = HttpResponseRedirect(next_url)
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )
    return response
