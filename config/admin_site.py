"""The admin, with its ModelAdmins registered by its first use instead of at start-up.

Django's AdminConfig imports every app's `admin` module when the process starts (autodiscover)
and the root URLconf builds every ModelAdmin's URLs on the first `{% url %}` of any page: about
1 MB of each web worker, for pages only staff open. Here the admin's URLconf
(config/admin_urls.py, a deferred include: config/deferred.py) registers them, on the first
request under /admin/ or the first `reverse("admin:…")`; the system checks register them before
checking them, so `manage.py check` sees every ModelAdmin as before.
"""

import threading

from django.contrib.admin.apps import SimpleAdminConfig
from django.contrib.admin.checks import check_admin_app, check_dependencies
from django.core import checks

_lock = threading.Lock()
_discovered = False


def admin_autodiscover() -> None:
    """django.contrib.admin.autodiscover, once per process."""
    global _discovered
    with _lock:
        if not _discovered:
            from django.contrib.admin import autodiscover

            autodiscover()
            _discovered = True


def check_admin_app_discovered(app_configs, **kwargs):
    admin_autodiscover()
    return check_admin_app(app_configs, **kwargs)


class AdminConfig(SimpleAdminConfig):
    """INSTALLED_APPS' admin: Django's, without the autodiscover at start-up."""

    def ready(self):
        checks.register(check_dependencies, checks.Tags.admin)
        checks.register(check_admin_app_discovered, checks.Tags.admin)
