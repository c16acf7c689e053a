"""Every task has its kind's queue (config/queues.py), and every queue has a worker in
Procfile.dev (what `make run` starts); webhooks' on a thread pool (slow I/O)."""

import shlex
from collections import Counter

from django.conf import settings

from config.celery_app import app
from config.queues import DEFAULT_QUEUE, QUEUES, task_routes
from tests.embedded.stack import ROOT


def project_tasks() -> set[str]:
    app.loader.import_default_modules()
    return {name for name in app.tasks if not name.startswith("celery.")}


def test_every_task_is_in_exactly_one_queue():
    named = Counter(task for tasks in QUEUES.values() for task in tasks)
    assert [task for task, count in named.items() if count > 1] == []
    assert set(named) == project_tasks()  # a new task must choose its queue


def test_the_settings_route_each_task_to_its_kind():
    assert task_routes() == settings.CELERY_TASK_ROUTES
    assert settings.CELERY_TASK_ROUTES["payments.tasks.scan_network"] == {"queue": "payments"}
    assert settings.CELERY_TASK_ROUTES["api.webhooks.tasks.webhook_deliver"] == {
        "queue": "webhooks"
    }
    assert settings.CELERY_TASK_ROUTES["rental.tasks.host_teardown"] == {"queue": "hosts"}
    assert settings.CELERY_TASK_ROUTES["rental.tasks.order_email"] == {"queue": "emails"}
    assert settings.CELERY_TASK_DEFAULT_QUEUE == DEFAULT_QUEUE


def procfile_workers() -> dict[str, list[str]]:
    workers = {}
    for line in (ROOT / "Procfile.dev").read_text().splitlines():
        name, _, command = line.partition(":")
        argv = shlex.split(command)
        if argv[:4] == ["celery", "-A", "config.celery_app", "worker"]:
            workers[name] = argv
    return workers


def test_make_run_starts_a_worker_for_every_queue_and_webhooks_on_threads():
    consumed = Counter()
    for argv in procfile_workers().values():
        consumed.update(argv[argv.index("-Q") + 1].split(","))
    assert consumed == Counter(list(QUEUES))  # every kind once
    webhooks = next(argv for argv in procfile_workers().values() if "webhooks" in argv)
    assert "--pool=threads" in webhooks
    hosts = next(argv for argv in procfile_workers().values() if "hosts" in argv)
    assert "payments" not in hosts[hosts.index("-Q") + 1]


def test_no_countdown_outlives_the_visibility_timeout():
    """A message waiting for its ETA is unacknowledged: longer than the visibility timeout, it
    would be handed out a second time. Webhook retries past the limit go to the sweep."""
    assert settings.CELERY_MAX_COUNTDOWN_SECONDS < settings.CELERY_VISIBILITY_TIMEOUT_SECONDS
    assert settings.CELERY_TASK_TIME_LIMIT < settings.CELERY_VISIBILITY_TIMEOUT_SECONDS
    assert settings.CELERY_VISIBILITY_TIMEOUT_SECONDS <= settings.CELERY_TASK_TIME_LIMIT + 120
    assert settings.HOSTS_PLAYBOOK_TIMEOUT_SECONDS < settings.CELERY_TASK_SOFT_TIME_LIMIT


def enqueued_tasks() -> list[tuple[str, int, object]]:
    """(file, line, first argument) of every enqueue()/enqueue_many() call in the apps: the
    argument is a string constant, or an AST node where it is not."""
    import ast

    calls = []
    for path in sorted(ROOT.glob("*/**/*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in ("tests", "bench", "scripts", ".venv", "node_modules"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in ("enqueue", "enqueue_many"):
                first = node.args[0]
                value = first.value if isinstance(first, ast.Constant) else first
                calls.append((str(relative), node.lineno, value))
    return calls


def test_every_enqueued_task_is_named_and_exists():
    """Tasks are enqueued by name, so that a web process never imports a tasks module (and
    Celery with it); a name that matches no task would wait in the outbox for ever."""
    calls = enqueued_tasks()
    assert len(calls) >= 30  # the scan sees the call sites
    tasks = project_tasks()
    assert [(f, line, arg) for f, line, arg in calls if arg not in tasks] == []
