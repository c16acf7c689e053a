"""The admin's URLconf, imported by the first request under /admin/ or the first
`reverse("admin:…")` (config/urls.py's deferred include): the ModelAdmins are registered here,
then their URLs built (config/admin_site.py)."""

from django.contrib import admin

from config.admin_site import admin_autodiscover

admin_autodiscover()

app_name = "admin"
urlpatterns = admin.site.get_urls()
