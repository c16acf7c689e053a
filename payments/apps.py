from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class PaymentsConfig(AppConfig):
    name = "payments"
    verbose_name = _("Payments")

    def ready(self) -> None:
        from rental.order_page import state_parts

        from .chain.settlement import Settler, settler_register
        from .crypto.selectors.order_payments import order_page_state
        from .crypto.services.settling import settle, settle_seen
        from .permissions import grant_finance_permissions

        post_migrate.connect(grant_finance_permissions, sender=self)
        # The chain settles what it stores and confirms through the crypto room, which it does
        # not import (payments.chain.settlement).
        settler_register(Settler(seen=settle_seen, changed=settle))
        # The order page's cached content shows the order's payments and the balance: their
        # state is part of its key (rental.order_page, which does not import payments).
        if order_page_state not in state_parts:
            state_parts.append(order_page_state)
