"""The web application as it was before web processes stopped importing Celery (issue 22): the
Celery app (config/__init__.py imported it), the tasks' modules (services imported them to queue
their tasks), and kombu's Redis transport and Celery's publishing machinery (the first publish
after a commit loaded them); then the same WSGI application. bench/http_pages.py compares the
memory of its workers with today's."""

# isort: off
from config.wsgi import application  # Django set up first: the tasks' modules import models

import kombu.messaging  # noqa: E402, F401
import kombu.pools  # noqa: E402, F401
import kombu.transport.redis  # noqa: E402, F401

import api.webhooks.tasks  # noqa: E402, F401
import config.celery_app  # noqa: E402, F401
import outbox.tasks  # noqa: E402, F401
import payments.tasks  # noqa: E402, F401
import rental.tasks  # noqa: E402, F401

config.celery_app.app.amqp  # noqa: B018 - Celery's publishing machinery, as a publish loads it

# isort: on

__all__ = ["application"]
