from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = _("API")
    # drf-spectacular's extensions (the Bearer scheme, our field types) are registered by
    # api/urls.py, imported with the first request under /api/ or the schema's generation:
    # a web worker that serves only pages never imports the schema generator (config/deferred.py).
