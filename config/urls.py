from django.contrib import admin
from django.urls import include, path
from django.utils.translation import gettext_lazy as _

from accounts import views as account_views

admin.site.site_header = _("GPU rental administration")
admin.site.site_title = _("GPU rental")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("account/api-tokens/", include("api.account_urls")),
    path("account/webhooks/", include("api.webhooks.page_urls")),
    path("account/", include("accounts.urls")),
    path("api/", include("api.urls")),
    path("i18n/setlang/", account_views.set_language, name="set_language"),
    path("", include("payments.urls")),
    path("", include("pilot.urls")),
    path("", include("rental.urls")),
    # The operators' health page; /healthz, /readyz and /metrics are answered by
    # monitoring.middleware ahead of every other middleware (see MIDDLEWARE).
    path("", include("monitoring.urls")),
]

# Under /api/ Django's own 404 and 500 answer problem+json too; elsewhere the site's pages.
handler404 = "api.problems.not_found"
handler500 = "api.problems.server_error"
