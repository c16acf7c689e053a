from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RentalConfig(AppConfig):
    name = "rental"
    verbose_name = _("GPU rental")
