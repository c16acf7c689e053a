from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PilotConfig(AppConfig):
    name = "pilot"
    verbose_name = _("Pilot")
