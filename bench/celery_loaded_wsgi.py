"""The web application as it was before web processes stopped importing Celery (issue 22): the
Celery app (config/__init__.py imported it) and kombu's Redis transport (the first publish after
a commit loaded it), then the same WSGI application. bench/http_pages.py compares the memory of
its workers with today's."""

import kombu.transport.redis  # noqa: F401

import config.celery_app  # noqa: F401
from config.wsgi import application

__all__ = ["application"]
