from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class RentalConfig(AppConfig):
    name = "rental"
    verbose_name = _("GPU rental")

    def ready(self) -> None:
        from .permissions import grant_operator_permissions

        post_migrate.connect(grant_operator_permissions, sender=self)
