from django.contrib import admin
from django.urls import include, path
from django.utils.translation import gettext_lazy as _

admin.site.site_header = _("GPU rental administration")
admin.site.site_title = _("GPU rental")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("account/", include("accounts.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("rental.urls")),
]
