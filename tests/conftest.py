from decimal import Decimal
from uuid import uuid4

import pytest
from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.core.management import call_command
from django.utils import translation

import config.celery_app  # noqa: F401  (the tests run and publish tasks: web processes do not)
from accounts.models import User
from payments.ledger.services.balance import balance_adjust
from rental import capacity
from rental.models import MAX_CARDS_PER_HOST, GpuModel, Host, HostState, Preparation
from rental.services import Configuration, order_create
from tests.mfa_fixtures import enrol_totp

pytest_plugins = [
    "tests.chain_fixtures",
    "tests.browser_fixtures",
    "tests.ssh_fixtures",
    "tests.host_fixtures",
]


@pytest.fixture(scope="session")
def django_db_setup(
    request, django_test_environment, django_db_blocker, django_db_modify_db_settings
):
    """The test database (one per run and xdist worker, tests/isolation.py) as a copy of a
    migrated template kept between runs (tests/db_template.py), dropped at the end; SQLite
    migrates as usual."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    verbosity = request.config.option.verbose
    if connection.vendor != "postgresql":
        with django_db_blocker.unblock():
            config = setup_databases(verbosity=verbosity, interactive=False)
        yield
        with django_db_blocker.unblock():
            teardown_databases(config, verbosity=verbosity)
        return
    from tests.db_template import create_test_db_from_template, drop_test_db

    with django_db_blocker.unblock():
        base = create_test_db_from_template(
            verbosity=verbosity, rebuild=bool(request.config.getvalue("create_db"))
        )
    yield
    with django_db_blocker.unblock():
        drop_test_db(base)


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts in the default language, whatever a previous one left active."""
    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture(autouse=True)
def _celery_joins_allowed():
    """An eager .delay() sets Celery's process-wide "joins would block" flag for the time of
    the call and puts back what it found; two threads doing it at once (the parallel tests)
    can leave it set, and a later test's .delay().get() is refused with "Never call
    result.get() within a task!" (seen once in a full run). Each test starts with it clear."""
    from celery._state import _set_task_join_will_block

    _set_task_join_will_block(False)
    yield


@pytest.fixture(autouse=True)
def _clear_cache():
    """Rate limits live in Redis (a database of the test suite's own): start each test clean."""
    cache.clear()
    yield
    cache.clear()


class HeldTasks:
    """The tasks of `names` written to the outbox (in order, as (short name, args)) since the
    last clear(); they never reach the broker, so nothing runs them."""

    def __init__(self, names: tuple[str, ...]):
        self.names = names
        self.after = 0

    def rows(self) -> list[tuple[str, tuple]]:
        from outbox.models import OutboxMessage

        found = OutboxMessage.objects.filter(task__in=self.names, pk__gt=self.after).order_by("pk")
        return [(row.task.rsplit(".", 1)[1], tuple(row.args)) for row in found]

    def clear(self) -> None:
        from django.db.models import Max

        from outbox.models import OutboxMessage

        self.after = OutboxMessage.objects.aggregate(last=Max("pk"))["last"] or 0

    def __eq__(self, other) -> bool:
        return self.rows() == list(other)

    def __iter__(self):
        return iter(self.rows())

    def __len__(self) -> int:
        return len(self.rows())

    def __repr__(self) -> str:
        return repr(self.rows())


@pytest.fixture
def hold_tasks(monkeypatch):
    """hold_tasks("rental.tasks.host_check", ...) -> HeldTasks: those tasks are written to the
    outbox as the application writes them, but their publishing is left out (the broker's
    boundary): the test sees what was queued, and nothing runs it. Other tasks run as usual."""
    from outbox import messages

    send = messages._send

    def hold(*names: str) -> HeldTasks:
        def held_send(message):
            if message.task not in names:
                send(message)

        monkeypatch.setattr(messages, "_send", held_send)
        return HeldTasks(names)

    return hold


@pytest.fixture
def catalogue(db) -> dict[str, GpuModel]:
    """The demo catalogue, keyed by short name: h100, h200, b200, mi300x."""
    call_command("load_demo_catalogue", stdout=_Null())
    return {model.slug.split("-")[0]: model for model in GpuModel.objects.all()}


class _Null:
    def write(self, *_args, **_kwargs):
        pass


_counter = iter(range(1, 10**9))


@pytest.fixture
def make_customer(db):
    def make(**fields) -> User:
        number = next(_counter)
        fields.setdefault("email", f"customer{number}@example.com")
        fields.setdefault("first_name", "Ada")
        fields.setdefault("last_name", f"Lovelace{number}")
        user = User.objects.create_user(password="correct-horse-battery", **fields)
        # As after signing up: the address is confirmed (verification is mandatory).
        EmailAddress.objects.create(user=user, email=user.email, verified=True, primary=True)
        return user

    return make


@pytest.fixture
def customer(make_customer) -> User:
    return make_customer(first_name="Grace", last_name="Hopper", email="grace@example.com")


@pytest.fixture
def customer_client(client, customer):
    client.force_login(customer)
    return client


@pytest.fixture
def place_order():
    def place(
        customer,
        gpu_model,
        *,
        lots=1,
        duration_days=7,
        preparation=Preparation.UBUNTU,
        custom_preparation="",
    ):
        gpu_model.refresh_from_db()
        return order_create(
            customer=customer,
            configuration=Configuration(
                gpu_model=gpu_model,
                duration_days=duration_days,
                lots=lots,
                preparation=preparation,
                custom_preparation=custom_preparation,
            ),
        )

    return place


def usd(value: str) -> Decimal:
    return Decimal(value)


@pytest.fixture
def finance_user(make_customer):
    user = make_customer(
        email="finance@example.com", first_name="Fiona", last_name="Nance", is_staff=True
    )
    user.groups.add(Group.objects.get_or_create(name="finance")[0])
    enrol_totp(user)  # staff pages need a second factor
    return user


@pytest.fixture
def finance_client(client, finance_user):
    client.force_login(finance_user)
    return client


@pytest.fixture
def credit(finance_user):
    """Credit a customer's balance the way finance does (a manual adjustment)."""

    def give(customer, amount: str, reason: str = "Bank transfer received"):
        return balance_adjust(
            customer=customer,
            amount=Decimal(amount),
            credit=True,
            reason=reason,
            actor=finance_user,
            request_key=str(uuid4()),
        )

    return give


def lots_available(gpu_model: GpuModel) -> int:
    """What the catalogue offers for this model now (free cards of its hosts minus holds)."""
    return capacity.lots_available([gpu_model])[gpu_model.pk]


def confirm_teardown(order, operator: User) -> list:
    """At the end of an order, its cards stay out of stock until the teardown is verified: on
    each host prepared by hand, an operator confirms every item of the checklist
    (rental.hosts.tenancy.tenancy_confirm_teardown); only then are the cards back in stock.
    Returns the tenancies, erased."""
    from rental.hosts.models import Tenancy, TenancyStatus
    from rental.hosts.tenancy import MANUAL_TEARDOWN_CHECKLIST, tenancy_confirm_teardown

    revoking = list(
        Tenancy.objects.filter(order=order, status=TenancyStatus.REVOKING).order_by("pk")
    )
    assert revoking, f"no host access of order {order.pk} is being revoked"
    confirmed = {key for key, _label in MANUAL_TEARDOWN_CHECKLIST}
    erased = [
        tenancy_confirm_teardown(tenancy_id=tenancy.pk, actor=operator, confirmed=confirmed)
        for tenancy in revoking
    ]
    assert all(tenancy.status == TenancyStatus.ERASED for tenancy in erased)
    return erased


def set_stock(gpu_model: GpuModel, lots: int) -> list[Host]:
    """Replace the model's hosts (none may have rented cards) by hosts with room for `lots`
    lots: as many full hosts of 64 cards as needed, the rest on one more host."""
    Host.objects.filter(gpu_model=gpu_model).delete()
    cards = lots * gpu_model.cards_per_lot
    per_host = MAX_CARDS_PER_HOST - MAX_CARDS_PER_HOST % gpu_model.cards_per_lot
    hosts = []
    number = 0
    while cards > 0:
        number += 1
        take = min(cards, per_host)
        hosts.append(
            Host.objects.create(
                management="manual",
                name=f"{gpu_model.slug}-stock-{number}",
                gpu_model=gpu_model,
                cards=take,
                ssh_host="127.0.0.1",
                ssh_port=22,
                ssh_user="ubuntu",
                state=HostState.AVAILABLE,
            )
        )
        cards -= take
    return hosts


@pytest.fixture
def make_host(db):
    numbers = iter(range(1, 10**9))

    def make(gpu_model: GpuModel, cards: int, **fields) -> Host:
        fields.setdefault("name", f"host-{gpu_model.slug}-{next(numbers)}")
        fields.setdefault("ssh_host", "127.0.0.1")
        fields.setdefault("ssh_port", 22)
        fields.setdefault("ssh_user", "ubuntu")
        fields.setdefault("management", "manual")  # the worker-managed ones: tests/rental/hosts
        return Host.objects.create(gpu_model=gpu_model, cards=cards, **fields)

    return make


@pytest.fixture
def operator(make_customer) -> User:
    """A member of the operators group (shared by the ops, payments and monitoring tests)."""
    user = make_customer(email="ops@example.com", first_name="Otto", last_name="Perator")
    user.groups.add(Group.objects.get_or_create(name="operators")[0])
    enrol_totp(user)  # staff pages need a second factor
    return user


@pytest.fixture
def operator_client(operator):
    from django.test import Client

    browser = Client()
    browser.force_login(operator)
    return browser


# The slowest files start first, so that the test workers finish together instead of one of
# them running a long Ansible or browser test alone at the end (measured: the last 20 % of a
# run on two workers took a third of its time). A stable sort: each file's tests stay together
# and in their order.
SLOW_FIRST = (
    "tests/payments/test_payment_state_machine_stateful.py",
    "tests/rental/hosts/",
    "tests/e2e/",
    "tests/test_production_roles.py",
    "tests/embedded/",
    "tests/rental/ops/test_query_counts.py",
    "tests/payments/test_balance_payment.py",
    "tests/payments/test_ledger_model.py",
    "tests/rental/test_migrations.py",
)


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        for index, prefix in enumerate(SLOW_FIRST):
            if path.startswith(prefix):
                return index
        return len(SLOW_FIRST)

    items.sort(key=rank)
