"""House rules the source itself must keep (DESIGN.md, "Writes"), read from the source (AST):

- row locks come from one lock module per app: no `select_for_update` (nor a raw
  `SELECT ... FOR UPDATE`) outside a `locks.py`;
- a status is changed only by its setter: no write of a status field outside the module of
  its setter, in any of the forms a write can take (an assignment, `setattr`,
  `.update(status=...)`, `save(update_fields=[..."status"...])`, `update_rows(..., ["status"])`,
  `bulk_update(..., ["status"])`, raw SQL `SET status = ...`).

The scanners are plain functions of a module's source, shown catching each form on small
snippets below, then run over every module of the apps.
"""

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("accounts", "api", "config", "monitoring", "outbox", "payments", "pilot", "rental")
APPS += ("statemachine",)

# The status fields of the house's state machines (and the order's provisioning issue) and the
# one module allowed to write each: the module of its setter.
SETTER_MODULES = {
    "status": {
        "rental/services/orders.py",  # Order.status: order_set_status (and order_create)
        "rental/services/extensions.py",  # OrderExtension.status: extension_set_status
        "rental/hosts/tenancy.py",  # Tenancy.status: tenancy_set_status
        "payments/crypto/services/status.py",  # CryptoPayment.status: payment_set_status
        "payments/chain/transfer_status.py",  # ChainTransfer.status: transfers_set_status
        "payments/withdrawals/services/status.py",  # Withdrawal.status: withdrawal_set_status
        "api/webhooks/services/status.py",  # WebhookDelivery.status: delivery_set_status
    },
    "state": {"rental/hosts/services.py"},  # Host.state: host_set_state
    "provisioning_issue": {"rental/services/orders.py"},  # order_set_provisioning_issue
    # CryptoPayment.review_reason: set with the status, or changed under review, by its batch
    "review_reason": {"payments/crypto/services/status.py"},
}
# TEMPORARY: modules that write a field of the same name on another entity outside that
# entity's setter module (none today: every entity's setter is in SETTER_MODULES).
OTHER_ENTITIES_WRITERS: dict[str, set[str]] = {}
# TEMPORARY: modules outside a lock module that still lock rows (none today; code moved out of
# payments brings its locks into its rooms' lock modules).
LOCKS_ALLOWLIST: set[str] = set()

SQL_FOR_UPDATE = re.compile(r"\bSELECT\b[\s\S]*\bFOR\s+UPDATE\b", re.IGNORECASE)
SQL_UPDATE = re.compile(r"\bUPDATE\b", re.IGNORECASE)
# What a SET assigns: up to the WHERE, FROM or RETURNING that ends it.
SQL_SET_CLAUSE = re.compile(
    r"\bSET\b([\s\S]*?)(?=\bWHERE\b|\bFROM\b|\bRETURNING\b|$)", re.IGNORECASE
)
BULK_WRITERS = {"update_rows", "bulk_update"}


def _called_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _names_in(node: ast.AST | None, constants: dict[str, set[str]] | None = None) -> set[str]:
    """The field names a list, tuple or set literal holds, following names of the module's
    constants (`FIELDS`, `[*FIELDS, "x"]`, `FIELDS + ["x"]`, `frozenset(FIELDS)`): a list of
    fields kept in a constant is how a status write once slipped past this guard."""
    constants = constants or {}
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        names: set[str] = set()
        for element in node.elts:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                names.add(element.value)
            elif isinstance(element, ast.Starred):
                names |= _names_in(element.value, constants)
        return names
    if isinstance(node, ast.Name):
        return constants.get(node.id, set())
    if isinstance(node, ast.Attribute):  # another module's constant: a.B_FIELDS
        return constants.get(node.attr, set())
    if isinstance(node, ast.BinOp):
        return _names_in(node.left, constants) | _names_in(node.right, constants)
    if isinstance(node, ast.Subscript):  # FIELDS[:-1]: any of them, to be safe
        return _names_in(node.value, constants)
    if isinstance(node, ast.Call) and node.args:  # list(FIELDS), frozenset(FIELDS), ...
        return _names_in(node.args[0], constants)
    return set()


def _constants(tree: ast.AST) -> dict[str, set[str]]:
    """Names assigned a collection of strings anywhere in the module (in order, so a constant
    built from another one is followed)."""
    constants: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = _names_in(node.value, constants)
            if names:
                for target in targets:
                    if isinstance(target, ast.Name):
                        constants[target.id] = constants.get(target.id, set()) | names
    return constants


def _strings(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node, node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(
                part.value if isinstance(part, ast.Constant) else " ? " for part in node.values
            )
            yield node, text


def lock_calls(source: str) -> list[int]:
    """Lines that lock rows: `select_for_update` or a raw `SELECT ... FOR UPDATE`."""
    tree = ast.parse(source)
    lines = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "select_for_update"
    ]
    docstrings = {
        id(body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and (body := node.body)
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    }
    lines += [
        node.lineno
        for node, text in _strings(tree)
        if id(node) not in docstrings and SQL_FOR_UPDATE.search(text)
    ]
    return sorted(lines)


def field_writes(
    source: str, field: str, known: dict[str, set[str]] | None = None
) -> list[tuple[int, str]]:
    """Every write of a field named `field` in this source: (line, form). `known`: constants
    of other modules (a field list imported from elsewhere, as settling once imported the
    payment setter's STATUS_FIELDS and wrote it itself)."""
    found: list[tuple[int, str]] = []
    assigned = re.compile(rf"(^|[\s,.\"]){field}\"?\s*=", re.IGNORECASE)
    tree = ast.parse(source)
    constants = {**(known or {}), **_constants(tree)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for part in ast.walk(target):
                    if (
                        isinstance(part, ast.Attribute)
                        and part.attr == field
                        and isinstance(part.ctx, ast.Store)
                    ):
                        found.append((node.lineno, "assignment"))
        elif isinstance(node, ast.Call):
            name = _called_name(node)
            if (
                name == "setattr"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value == field
            ):
                found.append((node.lineno, "setattr"))
            if name in {"update", "update_or_create"}:
                for keyword in node.keywords:
                    if keyword.arg == field:
                        found.append((node.lineno, f".{name}({field}=...)"))
                    elif keyword.arg is None and isinstance(keyword.value, ast.Dict):
                        keys = {k.value for k in keyword.value.keys if isinstance(k, ast.Constant)}
                        if field in keys:
                            found.append((node.lineno, f".{name}(**{{{field!r}: ...}})"))
            for keyword in node.keywords:
                if keyword.arg == "update_fields" and field in _names_in(keyword.value, constants):
                    found.append((node.lineno, "update_fields"))
            if name in BULK_WRITERS:
                listed = _names_in(node.args[1], constants) if len(node.args) >= 2 else set()
                for keyword in node.keywords:
                    if keyword.arg == "fields":
                        listed |= _names_in(keyword.value, constants)
                if field in listed:
                    found.append((node.lineno, f"{name}(..., [{field!r}])"))
    for node, text in _strings(tree):
        clauses = SQL_SET_CLAUSE.findall(text) if SQL_UPDATE.search(text) else []
        if any(assigned.search(clause) for clause in clauses):
            found.append((node.lineno, "raw SQL SET"))
    return sorted(found)


@functools.cache
def _project_constants() -> dict[str, set[str]]:
    """Field-list constants (UPPER_CASE names) of every scanned module, by name: what another
    module may import. A local variable (`fields`) means nothing outside its module."""
    known: dict[str, set[str]] = {}
    for _path, source in _modules():
        for name, names in _constants(ast.parse(source)).items():
            if name.isupper():
                known[name] = known.get(name, set()) | names
    return known


@functools.cache
def _modules() -> tuple[tuple[str, str], ...]:
    return tuple(
        (path.relative_to(ROOT).as_posix(), path.read_text())
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts
    )


# ------------------------------------------------------------------ the scanners, shown


@pytest.mark.parametrize(
    ("source", "form"),
    [
        ("order.status = 'paid'\n", "assignment"),
        ("order.status, order.ends_at = 'paid', None\n", "assignment"),
        ("self.order.status += 'x'\n", "assignment"),
        ("setattr(order, 'status', 'paid')\n", "setattr"),
        ("Order.objects.filter(pk=1).update(status='paid')\n", ".update(status=...)"),
        ("Order.objects.filter(pk=1).update(**{'status': 'paid'})\n", ".update(**{'status': ...})"),
        (
            "Order.objects.update_or_create(pk=1, defaults={}, status='paid')\n",
            ".update_or_create(status=...)",
        ),
        ("order.save(update_fields=['ends_at', 'status'])\n", "update_fields"),
        ("order.save(update_fields=('status',))\n", "update_fields"),
        ("update_rows(orders, ['status', 'updated_at'])\n", "update_rows(..., ['status'])"),
        ("bulk.update_rows(objs=orders, fields=['status'])\n", "update_rows(..., ['status'])"),
        ("Order.objects.bulk_update(orders, ['status'])\n", "bulk_update(..., ['status'])"),
        ("Order.objects.bulk_update(orders, fields=('status',))\n", "bulk_update(..., ['status'])"),
        (
            "cursor.execute('UPDATE rental_order SET status = %s WHERE id = %s', [s, pk])\n",
            "raw SQL SET",
        ),
        ('cursor.execute(f"UPDATE {t} SET ends_at = %s, \\"status\\" = %s", a)\n', "raw SQL SET"),
    ],
)
def test_the_status_guard_catches_each_form_of_write(source, form):
    assert field_writes(source, "status") == [(1, form)]


@pytest.mark.parametrize(
    ("source", "form"),
    [
        (
            "FIELDS = ['status', 'updated_at']\nupdate_rows(orders, FIELDS)\n",
            "update_rows(..., ['status'])",
        ),
        (
            "BASE = ('status',)\nFIELDS = [*BASE, 'at']\norder.save(update_fields=FIELDS)\n",
            "update_fields",
        ),
        (
            "FIELDS = ['status']\nOrder.objects.bulk_update(rows, FIELDS + ['x'])\n",
            "bulk_update(..., ['status'])",
        ),
        (
            "order.save(update_fields=list(bulk.STATUS_FIELDS))\nSTATUS_FIELDS = ['status']\n",
            "update_fields",
        ),
    ],
)
def test_the_status_guard_follows_field_lists_kept_in_constants(source, form):
    """How `STATUS_FIELDS` once slipped past the guard: the list of fields in a constant."""
    assert [found for _line, found in field_writes(source, "status")] == [form]


def test_the_status_guard_catches_the_leak_settling_had():
    """Before issue 21, settling wrote the payment's status itself through the setter's list,
    imported and sliced: `update_rows(rows, [*MONEY_FIELDS, *STATUS_FIELDS[:-1]])`. The old
    guard (two regexes) missed it; this one, given the other module's constants, does not."""
    settling = (
        "from .payment_status import STATUS_FIELDS\n"
        "MONEY_FIELDS = ['amount_received']\n"
        "update_rows(list(dirty.values()), [*MONEY_FIELDS, *STATUS_FIELDS[:-1]])\n"
    )
    setter = {"STATUS_FIELDS": {"status", "review_reason", "confirmed_at", "updated_at"}}
    assert field_writes(settling, "status", setter) == [(3, "update_rows(..., ['status'])")]
    old_guard = [r"payment\.status\s*=[^=]", r"\.update\([^)]*\bstatus="]
    assert not any(re.search(pattern, settling) for pattern in old_guard)


@pytest.mark.parametrize(
    "source",
    [
        "if order.status == 'paid':\n    pass\n",
        "Order.objects.filter(status='paid').count()\n",
        "Order.objects.exclude(status='paid').update(ends_at=None)\n",
        "order.save(update_fields=['ends_at', 'updated_at'])\n",
        "update_rows(orders, ['ends_at'])\n",
        "status = order.status\n",
        "cursor.execute('SELECT status FROM rental_order WHERE status = %s', [s])\n",
        "cursor.execute('UPDATE rental_order SET ends_at = now() WHERE status = %s', [s])\n",
        "order.state_detail = 'x'\n",
    ],
)
def test_the_status_guard_lets_reads_and_other_fields_pass(source):
    assert field_writes(source, "status") == []


def test_the_guard_tells_the_fields_apart():
    source = "host.state = 'available'\norder.provisioning_issue = ''\n"
    assert field_writes(source, "state") == [(1, "assignment")]
    assert field_writes(source, "provisioning_issue") == [(2, "assignment")]
    assert field_writes(source, "status") == []


@pytest.mark.parametrize(
    "source",
    [
        "Order.objects.select_for_update(of=('self',)).get(pk=1)\n",
        "rows = Order.objects.select_for_update\n",
        "cursor.execute('SELECT id FROM rental_order WHERE id = %s FOR UPDATE', [pk])\n",
        "cursor.execute(f'SELECT * FROM {table} FOR  update OF t', [])\n",
    ],
)
def test_the_lock_guard_catches_each_form_of_lock(source):
    assert lock_calls(source) == [1]


def test_the_lock_guard_lets_a_docstring_say_how_locks_are_taken():
    source = '"""Every lock is `SELECT ... FOR UPDATE OF <table>`."""\nx = 1\n'
    assert lock_calls(source) == []


# ------------------------------------------------------------------ the house


def test_rows_are_locked_only_in_lock_modules():
    offenders = [
        f"{path}:{line}"
        for path, source in _modules()
        if not path.endswith("/locks.py") and path not in LOCKS_ALLOWLIST
        for line in lock_calls(source)
    ]
    assert offenders == []


def key_locks(source: str) -> list[int]:
    """Lines of `select_for_update(...)` calls without `no_key=True`: FOR UPDATE blocks the KEY
    SHARE lock of PostgreSQL's foreign-key checks at COMMIT (tests/rental/services/
    test_lock_deadlock.py: an order and a payment's settlement deadlocked on it)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "select_for_update"
        and not any(
            k.arg == "no_key" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        )
    )


def test_the_key_lock_guard_tells_no_key_locks_apart():
    assert key_locks("Order.objects.select_for_update(of=('self',)).get(pk=1)\n") == [1]
    assert key_locks("Order.objects.select_for_update(no_key=False)\n") == [1]
    assert key_locks("Order.objects.select_for_update(of=('self',), no_key=True)\n") == []


def test_every_row_lock_lets_foreign_key_checks_through():
    offenders = [f"{path}:{line}" for path, source in _modules() for line in key_locks(source)]
    assert offenders == []


def test_the_temporary_lock_allowlist_holds_only_modules_that_still_lock():
    sources = dict(_modules())
    stale = [path for path in LOCKS_ALLOWLIST if not lock_calls(sources.get(path, ""))]
    assert stale == []


@pytest.mark.parametrize("field", sorted(SETTER_MODULES))
def test_status_fields_are_written_only_by_their_setters(field):
    allowed = SETTER_MODULES[field] | OTHER_ENTITIES_WRITERS.get(field, set())
    offenders = [
        f"{path}:{line} {form}"
        for path, source in _modules()
        if path not in allowed
        for line, form in field_writes(source, field, _project_constants())
    ]
    assert offenders == []


def test_the_temporary_writers_allowlist_holds_only_modules_that_still_write():
    sources = dict(_modules())
    stale = [
        path
        for field, paths in OTHER_ENTITIES_WRITERS.items()
        for path in paths
        if not field_writes(sources.get(path, ""), field)
    ]
    assert stale == []
