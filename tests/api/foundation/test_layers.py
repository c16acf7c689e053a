"""The API builds on the apps' services, selectors and models, never on their page views."""

import ast
from pathlib import Path

import api

API_DIR = Path(api.__file__).parent
OTHER_APPS = ("accounts", "rental", "payments", "pilot", "outbox")


def _imported_modules(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_api_module_imports_another_apps_views():
    offenders = []
    for path in sorted(API_DIR.rglob("*.py")):
        for module in _imported_modules(path.read_text()):
            parts = module.split(".")
            if parts[0] in OTHER_APPS and len(parts) > 1 and parts[1] == "views":
                offenders.append(f"{path.relative_to(API_DIR.parent)}: {module}")
    assert not offenders, offenders


def test_the_order_page_and_the_api_show_access_for_the_same_statuses():
    from api.resources import orders
    from rental.models import ACCESS_STATUSES, OrderStatus
    from rental.views import customer

    assert {OrderStatus.ACTIVE, OrderStatus.ENDED} == ACCESS_STATUSES
    assert customer.ACCESS_STATUSES is ACCESS_STATUSES
    assert orders.ACCESS_STATUSES is ACCESS_STATUSES
