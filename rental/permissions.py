"""What the `operators` group may do in the Django admin on the rental app."""

OPERATOR_PERMISSIONS = (
    "view_gpumodel",
    "add_gpumodel",
    "change_gpumodel",
    "view_lotprice",
    "add_lotprice",
    "change_lotprice",
    "delete_lotprice",
    "view_order",
    "view_orderstatuschange",
)


def grant_operator_permissions(sender, using="default", **kwargs) -> None:
    """post_migrate: keep the operators group's catalogue permissions in place (idempotent)."""
    from django.contrib.auth.models import Group, Permission

    group, _ = Group.objects.using(using).get_or_create(name="operators")
    permissions = Permission.objects.using(using).filter(
        content_type__app_label="rental", codename__in=OPERATOR_PERMISSIONS
    )
    group.permissions.add(*permissions)
