from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class PaymentsConfig(AppConfig):
    name = "payments"
    verbose_name = _("Payments")

    def ready(self) -> None:
        from .chain.settlement import Settler, settler_register
        from .crypto.services.settling import settle, settle_seen
        from .permissions import grant_finance_permissions

        post_migrate.connect(grant_finance_permissions, sender=self)
        # The chain settles what it stores and confirms through the crypto room, which it does
        # not import (payments.chain.settlement).
        settler_register(Settler(seen=settle_seen, changed=settle))
