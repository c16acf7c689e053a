from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = _("API")

    def ready(self):
        # Register the Bearer scheme and our field types with drf-spectacular.
        from . import schema, schema_fields  # noqa: F401
