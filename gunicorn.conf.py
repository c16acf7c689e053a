"""gunicorn's configuration for the web role (compose.yaml, deploy/systemd/gpu-rental-web.service,
Procfile.production): `gunicorn -c gunicorn.conf.py config.wsgi`. Every value can be changed
from the environment without editing this file."""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", f"0.0.0.0:{os.environ.get('PORT', '8000')}")
# Sync workers: each serves one request at a time and keeps its database connection
# (DB_CONN_MAX_AGE); give PostgreSQL max_connections for all of them and the Celery workers.
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
worker_class = "sync"
# A request longer than this is a fault (pages answer in milliseconds; the slowest path, a
# receipt PDF, in well under a second): the worker is replaced.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 30
keepalive = 5
# Workers are replaced now and then, so slow growth of memory never builds up.
max_requests = 2000
max_requests_jitter = 200
# Behind a reverse proxy that sets X-Forwarded-For and X-Forwarded-Proto (TRUSTED_PROXY_COUNT
# tells the application how many proxies to trust for the client's address).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOGLEVEL", "info")
# The application is imported in each worker, after the fork: no database or broker
# connection is shared between processes.
preload_app = False
# gunicorn's control socket (gunicornc, since gunicorn 25) defaults to one path per user,
# $HOME/.gunicorn/gunicorn.ctl: a second web server on the machine took it over from the first
# or failed to create it ("Control server error: File exists"), and the service account's home
# got a folder. Off unless GUNICORN_CONTROL_SOCKET names a path for this server.
control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET", "")
control_socket_disable = not control_socket
