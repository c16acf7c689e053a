from .roles import FINANCE, OPERATORS, has_role


def staff_roles(request) -> dict:
    """Which staff consoles the navigation offers. Lazy: nothing is read (not even the
    session) unless a template asks."""
    return {
        "is_finance": lambda: has_role(request.user, FINANCE),
        "is_operator": lambda: has_role(request.user, OPERATORS),
    }
