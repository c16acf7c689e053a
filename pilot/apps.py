from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PilotConfig(AppConfig):
    name = "pilot"
    verbose_name = _("Pilot")

    def ready(self) -> None:
        # The worker runs the diagnostics kit as the tenant when it verifies a host, and its
        # report comes back here (rental never imports the pilot: it asks through a hook).
        from rental.hosts import handover

        from .kit.diagnostics import FILES, order_document
        from .services.reports import report_store_from_worker

        def kit_for(order):
            document = order_document(
                order=order, token="", upload_url="", language=order.customer.language or "en"
            )
            return handover.Kit(script=FILES / "diagnose.py", order_document=document)

        handover.register(kit_for=kit_for, receive=report_store_from_worker)
