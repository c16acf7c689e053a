from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


def ensure_staff_groups(sender, using="default", **kwargs) -> None:
    """The staff groups always exist, also after a database flush."""
    from django.contrib.auth.models import Group

    from .roles import STAFF_GROUPS

    for name in STAFF_GROUPS:
        Group.objects.using(using).get_or_create(name=name)


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = _("Accounts")

    def ready(self) -> None:
        post_migrate.connect(ensure_staff_groups, sender=self)
