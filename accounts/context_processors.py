def staff_roles(request) -> dict:
    """Which staff consoles the navigation offers.

    Lazy: nothing is read (not even the session) unless a template asks, and the user's
    groups are read at most once per request.
    """

    def groups() -> set[str]:
        user = request.user
        if not user.is_authenticated:
            return set()
        if not hasattr(user, "_staff_group_names"):
            user._staff_group_names = set(user.groups.values_list("name", flat=True))
        return user._staff_group_names

    def has_role(name: str) -> bool:
        return request.user.is_authenticated and (request.user.is_superuser or name in groups())

    return {
        "is_finance": lambda: has_role("finance"),
        "is_operator": lambda: has_role("operators"),
    }
