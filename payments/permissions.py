"""What the `finance` group may see in the Django admin: orders and the ledger, read-only."""

FINANCE_PERMISSIONS = (
    ("rental", "view_order"),
    ("rental", "view_orderstatuschange"),
    ("payments", "view_ledgeraccount"),
    ("payments", "view_ledgertransaction"),
    ("payments", "view_ledgerentry"),
    ("payments", "view_reconciliationrun"),
)


def grant_finance_permissions(sender, using="default", **kwargs) -> None:
    from django.contrib.auth.models import Group, Permission
    from django.db.models import Q

    group, _ = Group.objects.using(using).get_or_create(name="finance")
    wanted = Q()
    for app_label, codename in FINANCE_PERMISSIONS:
        wanted |= Q(content_type__app_label=app_label, codename=codename)
    group.permissions.add(*Permission.objects.using(using).filter(wanted))
