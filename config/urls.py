from allauth.account.decorators import secure_admin_login
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from django.utils.translation import gettext_lazy as _
from django.views import defaults

from accounts import views as account_views
from accounts.mfa import has_totp
from config.deferred import deferred_include

admin.site.site_header = _("GPU rental administration")
admin.site.site_title = _("GPU rental")
# The admin's own login form would skip the second factor: log in through allauth (which asks
# for the code), and open the admin only to staff with an authenticator app, like staff pages.
_admin_login = secure_admin_login(admin.site.login)


def _admin_login_with_second_factor(request, *args, **kwargs):
    if request.user.is_authenticated and request.user.is_staff and not has_totp(request.user):
        messages.warning(
            request, _("The administration needs a second factor: set up an authenticator app.")
        )
        return redirect("mfa_activate_totp")
    return _admin_login(request, *args, **kwargs)


def _favicon(request):
    """Browsers ask for /favicon.ico whatever the page's <link rel="icon"> says. A temporary
    redirect: the static name is hashed, and a browser keeps a permanent one after a new icon."""
    return HttpResponseRedirect(static("favicon.svg"))


admin.site.login = _admin_login_with_second_factor
_admin_has_permission = admin.site.has_permission
admin.site.has_permission = lambda request: (
    _admin_has_permission(request) and has_totp(request.user)
)

urlpatterns = [
    path("favicon.ico", _favicon),
    # Imported, with the ModelAdmins registered, by the first request under /admin/ (or a
    # reverse("admin:...")): config/admin_site.py.
    deferred_include("admin/", "config.admin_urls", "admin"),
    path("accounts/", include("allauth.urls")),
    path("account/api-tokens/", include("api.account_urls")),
    path("account/webhooks/", include("api.webhooks.page_urls")),
    path("account/", include("accounts.urls")),
    # Imported by the first request under /api/ (or reverse("api:...")): config/deferred.py.
    deferred_include("api/", "api.urls", "api"),
    path("i18n/setlang/", account_views.set_language, name="set_language"),
    path("i18n/<str:language>/", account_views.switch_language, name="switch_language"),
    path("", include("payments.urls")),
    path("", include("pilot.urls")),
    path("", include("rental.urls")),
    # The operators' health page; /healthz, /readyz and /metrics are answered by
    # monitoring.middleware ahead of every other middleware (see MIDDLEWARE).
    path("", include("monitoring.urls")),
]

# Under /api/ Django's own 400, 404 and 500 answer problem+json too (api/problems.py, which
# imports DRF: loaded only for an error under /api/); elsewhere the site's pages.
API_PATH_PREFIX = "/api/"


def handler400(request, exception=None):
    if request.path.startswith(API_PATH_PREFIX):
        from api.problems import bad_request

        return bad_request(request, exception)
    return defaults.bad_request(request, exception)


def handler404(request, exception=None):
    if request.path.startswith(API_PATH_PREFIX):
        from api.problems import not_found

        return not_found(request, exception)
    return defaults.page_not_found(request, exception)


def handler500(request):
    if request.path.startswith(API_PATH_PREFIX):
        from api.problems import server_error

        return server_error(request)
    return defaults.server_error(request)
