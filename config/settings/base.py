"""Settings shared by every environment; everything that differs comes from the environment.

`.env.example` lists every variable. The embedded defaults (SQLite files under ``var/`` for the
database and the Celery broker) need no server; ``DATABASE_URL`` and ``REDIS_URL`` switch to
PostgreSQL and Redis.
"""

import os
import re
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from config.queues import DEFAULT_QUEUE, task_routes

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var"))
NODE_MODULES = BASE_DIR / "node_modules"


def env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def env_bool(name: str, default: bool) -> bool:
    value = env(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = env(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


SECRET_KEY = env("SECRET_KEY", "insecure-development-key-never-use-in-production")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "config.admin_site.AdminConfig",  # Django's admin, its ModelAdmins registered on first use
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "allauth",
    "allauth.account",
    "allauth.mfa",
    "accounts",
    "rental",
    "payments",
    "monitoring",
    "pilot",
    "rest_framework",
    "drf_spectacular",
    "outbox",
    "api",
    "api.webhooks",
]

MIDDLEWARE = [
    # /healthz, /readyz and /metrics, answered before anything else (no HTTPS redirect, no
    # ALLOWED_HOSTS: load balancers and Prometheus call them by IP): monitoring/middleware.py.
    "monitoring.middleware.OperabilityEndpointsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    # The anonymous catalogue from the cache, on the stock version: the rest is skipped.
    "rental.middleware.AnonymousCatalogueMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.NoStoreMiddleware",  # logged-in pages and CSVs: Cache-Control no-store
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "accounts.middleware.HtmxLoginRedirectMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "config.urls"
# Django's form renderer on the template backend above (config/deferred.py).
FORM_RENDERER = "config.deferred.FormRenderer"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "config.deferred.DjangoTemplates",  # Django's, less DRF's unused tag library
        "NAME": "django",  # the alias Django's own backend has
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.staff_roles",
            ],
        },
    },
]

# Database: SQLite under var/ unless DATABASE_URL says otherwise.
VAR_DIR.mkdir(parents=True, exist_ok=True)
# PostgreSQL connections persist across requests (DB_CONN_MAX_AGE seconds, 60 by default; 0
# opens one per request), checked before a request reuses them. Measured under gunicorn's sync
# workers (bench/http_pages.py --db-modes), persistent connections gave the pages 1.6-1.7x the
# requests per second of a new connection per request, and more than psycopg's pool (a sync
# worker serves one request at a time: a pool has nothing to share). SQLite, whose connection
# is a file opened, keeps one per request.
DATABASES = {
    "default": dj_database_url.parse(
        env("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"), conn_health_checks=True
    )
}
DATABASES["default"]["CONN_MAX_AGE"] = int(
    env("DB_CONN_MAX_AGE", "0" if DATABASES["default"]["ENGINE"].endswith("sqlite3") else "60")
)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Web, worker and beat share the file: WAL lets readers run beside one writer, and
    # IMMEDIATE transactions serialise writers instead of failing on a lock upgrade.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Cache: Redis when configured (allauth's rate limits need a shared cache), else local memory.
REDIS_URL = env("REDIS_URL")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "config.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env("CACHE_KEY_PREFIX", "gpu-rental"),
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_USER_MODEL = "accounts.User"
# Ours first: it logs in as allauth's does and reads the staff roles with the session's user.
# The other two stay so that sessions recorded under them still resolve.
AUTHENTICATION_BACKENDS = [
    "accounts.auth_backends.AuthenticationBackend",
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
# Sessions are read from the cache (Redis, shared by the workers) and written through to the
# database; the local-memory cache is per process, so without Redis they stay in the database.
if REDIS_URL:
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "accounts:overview"

# django-allauth: email is the login; no username, no KYC.
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_FORMS = {"signup": "accounts.forms.SignupForm"}
ACCOUNT_ADAPTER = "accounts.adapter.AccountAdapter"
# Sign-up logs in once the code mailed to the address is typed, on the same page. allauth hides
# whether an address has an account only so: a taken address gets the same code page, creates
# nothing, and its owner is mailed "someone tried to sign up with your address" instead.
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED = True
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_PREVENT_ENUMERATION = True
# Off: allauth offers "use a different address" on the code page only for a new address.
ACCOUNT_EMAIL_VERIFICATION_SUPPORTS_CHANGE = False
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
# Security emails (allauth): a password changed or reset, an email address changed, an
# authenticator app added or removed, new recovery codes. Staff enrol their second factor in
# a session opened with the password alone: the owner learns at once if someone else did.
ACCOUNT_EMAIL_NOTIFICATIONS = True
# "[GPU rental] " / "[Noleggio GPU] ": the product's name in the language of the email.
ACCOUNT_EMAIL_SUBJECT_PREFIX = format_lazy("[{}] ", _("GPU rental"))
# Sign-ups and logins count failures, not a customer who gets in: allauth's "login" counts every
# attempt, so it is off; "login_failed" is given back when the password was right,
# "signup_failed" counts forms sent back with errors (accounts.forms.SignupForm), and "signup"
# only bounds the accounts, hence emails, one address creates (well above a person's needs).
# A right password gets a fresh code for an address still unconfirmed (accounts.adapter),
# whatever "confirm_email" allows the code page's resend, up to "confirm_email_on_login".
ACCOUNT_RATE_LIMITS = {
    "login": "",
    "login_failed": "10/m/ip,5/5m/key",
    "signup": "60/h/ip",
    "signup_failed": "20/m/ip",
    "confirm_email_on_login": "5/h/key,30/h/ip",
    "reset_password": "20/m/ip,5/m/key",
    "reset_password_from_key": "20/m/ip",
    "change_password": "5/m/user",
    "manage_email": "10/m/user",
    "confirm_email": "1/3m/key",
}
ACCOUNT_DEFAULT_HTTP_PROTOCOL = env("HTTP_PROTOCOL", "http")
# allauth's MFA: staff (operators, finance) must have an authenticator app before a staff page
# opens (accounts.roles); customers may add one. Recovery codes come with it.
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes"]
MFA_TOTP_ISSUER = env("MFA_TOTP_ISSUER", "GPU rental")
# Rate limits count per client address. Behind proxies of ours (the production TLS proxy: 1),
# that is the address the last of them appended to X-Forwarded-For; 0, the default, ignores
# the header, which any client can send. Or a header a proxy of ours sets, such as X-Real-IP.
_proxy_count = env("TRUSTED_PROXY_COUNT", "0")
if not re.fullmatch(r"[0-9]+", _proxy_count):
    raise ImproperlyConfigured(
        f"TRUSTED_PROXY_COUNT must be a whole number of proxies, 0 or more, not {_proxy_count!r}."
    )
ALLAUTH_TRUSTED_PROXY_COUNT = int(_proxy_count)
ALLAUTH_TRUSTED_CLIENT_IP_HEADER = env("TRUSTED_CLIENT_IP_HEADER")

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("it", _("Italian"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True
# One date and time format per language, with the zone (config/formats).
FORMAT_MODULE_PATH = ["config.formats"]

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
# Third-party front-end files come from npm at set-up; they are never committed. Only the files
# the templates use are collected (config/staticfiles.py: WhiteNoise keeps every collected
# file's entry in each web worker).
VENDOR_STATIC_FILES = {
    "vendor/htmx": (NODE_MODULES / "htmx.org" / "dist", ["htmx.min.js"]),
    "vendor/pico": (NODE_MODULES / "@picocss" / "pico" / "css", ["pico.min.css"]),
    # The API docs page; the stylesheet names its source map.
    "vendor/swagger-ui": (
        NODE_MODULES / "swagger-ui-dist",
        ["swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui.css.map"],
    ),
}
# Apps whose static files no page uses, left out of collectstatic (config/staticfiles.py):
# Django REST framework's are the browsable API's (off: JSON only), django-htmx's are htmx
# builds and extensions (the layout takes htmx from npm, above).
STATIC_FILES_UNUSED_APPS = ["rest_framework", "django_htmx"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "config.staticfiles.AppDirectoriesFinder",
    "config.staticfiles.VendorFilesFinder",
]

# Content Security Policy: only our own files, no inline script or style.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "object-src": [CSP.NONE],
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

# Mail (Django 6.1 MAILERS): logged (config/mail.py) unless an SMTP host is configured.
EMAIL_HOST = env("EMAIL_HOST")
if EMAIL_HOST:
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {
                "host": EMAIL_HOST,
                "port": int(env("EMAIL_PORT", "587")),
                "username": env("EMAIL_HOST_USER", ""),
                "password": env("EMAIL_HOST_PASSWORD", ""),
                "use_tls": env_bool("EMAIL_USE_TLS", True),
                "timeout": 20,
            },
        }
    }
else:
    # Each email logged whole and readable, at INFO (config/mail.py).
    MAILERS = {"default": {"BACKEND": "config.mail.ConsoleEmailBackend"}}
del EMAIL_HOST
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "GPU rental <noreply@localhost>")
# Where customers write to (the help page, and every "contact us").
SUPPORT_EMAIL = env("SUPPORT_EMAIL", "support@example.com")
# Who issues the receipts (payments/receipts): printed at the top of every receipt, HTML and
# PDF. The address may span lines ("\n" in the variable); the VAT number is left out when empty.
RECEIPT_ISSUER_NAME = env("RECEIPT_ISSUER_NAME", "GPU rental")
RECEIPT_ISSUER_ADDRESS = env("RECEIPT_ISSUER_ADDRESS", "").replace("\\n", "\n")
RECEIPT_ISSUER_VAT_NUMBER = env("RECEIPT_ISSUER_VAT_NUMBER", "")
RECEIPT_ISSUER_EMAIL = env("RECEIPT_ISSUER_EMAIL", SUPPORT_EMAIL)
# The address customers reach the site at, for links in emails.
SITE_URL = env("SITE_URL", "http://127.0.0.1:8000")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# Celery: Redis when configured, else a SQLite file under var/ through kombu's SQLAlchemy
# transport as config/embedded_broker.py adapts it: safe with web, worker and beat writing at
# once (the filesystem transport let the worker read half-written messages, celery/kombu#1551).
CELERY_BROKER_URL = env("CELERY_BROKER_URL", REDIS_URL)
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = f"sqlite:///{VAR_DIR / 'celery-broker.sqlite3'}"
    CELERY_BROKER_TRANSPORT = "config.embedded_broker:Transport"  # imported only when used
    CELERY_BROKER_TRANSPORT_OPTIONS = {}
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = 240
# The longest any task may run (no task sets its own; a playbook stops at
# HOSTS_PLAYBOOK_TIMEOUT_SECONDS, 200).
CELERY_TASK_TIME_LIMIT = 300
# A message a worker took and never acknowledged (the worker killed with SIGKILL, its machine
# lost) goes back to its queue this long after it was taken: just above the hard limit, so a task
# still running is never handed to a second worker, and a killed worker's tasks run again within
# minutes (Redis looks for such messages every 30 s), not after the hour kombu would wait.
CELERY_VISIBILITY_TIMEOUT_SECONDS = CELERY_TASK_TIME_LIMIT + 60
# A message waiting for its ETA is an unacknowledged one too: a countdown longer than the
# visibility timeout would be handed out again. Later attempts are left to their kind's minute
# sweep (webhook retries: api/webhooks/services/sweep.py).
CELERY_MAX_COUNTDOWN_SECONDS = CELERY_TASK_TIME_LIMIT
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": CELERY_VISIBILITY_TIMEOUT_SECONDS,
        "unacked_restore_interval": 10,
        "unacked_restore_throttle": 3,
    }
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # Exactly one beat, enforced: celery-redbeat keeps the schedule in Redis and lets only the
    # beat holding its lock send anything. A second beat started by mistake (another machine,
    # a restart overlapping the old process) waits for the lock and stays idle; it takes over
    # within CELERY_REDBEAT_LOCK_TIMEOUT of the first one's death. (single-beat would do the
    # same from outside, as one more process wrapping beat; redbeat is beat's own scheduler.)
    # The embedded default (`make run`, no Redis) keeps beat's file scheduler: one machine.
    CELERY_BEAT_SCHEDULER = "redbeat.RedBeatScheduler"
    CELERY_REDBEAT_REDIS_URL = CELERY_BROKER_URL
    # Installations sharing one Redis give each its own prefix.
    CELERY_REDBEAT_KEY_PREFIX = env("CELERY_REDBEAT_KEY_PREFIX", "gpu-rental:redbeat")
    CELERY_REDBEAT_LOCK_TIMEOUT = int(env("CELERY_REDBEAT_LOCK_TIMEOUT", "30"))
    # The lock is extended at every tick: ticks well inside its timeout.
    CELERY_BEAT_MAX_LOOP_INTERVAL = min(5, CELERY_REDBEAT_LOCK_TIMEOUT // 3)
# Plain data, so that web processes need not import Celery: a schedule is seconds, or
# {"crontab": fields} that config/celery_app.py makes a crontab.
CELERY_BEAT_SCHEDULE = {
    "reconcile-daily": {
        "task": "payments.tasks.reconcile_daily",
        "schedule": {"crontab": {"hour": 2, "minute": 30}},  # UTC (CELERY_TIMEZONE)
    },
    "scan-networks": {
        "task": "payments.tasks.scan_all_networks",
        "schedule": float(env("PAYMENT_SCAN_INTERVAL_SECONDS", "5")),
    },
    "expire-payments": {
        "task": "payments.tasks.expire_payments",
        "schedule": 30.0,
    },
    "check-sent-withdrawals": {
        "task": "payments.tasks.withdrawals_check_sent",  # finance's transfers, on chain
        "schedule": float(env("WITHDRAWAL_CHECK_INTERVAL_SECONDS", "30")),
    },
    "rentals-tick": {
        "task": "rental.tasks.rentals_tick",  # reminders and the hard stop at the end
        "schedule": 60.0,
    },
    "purge-idempotency-keys": {
        "task": "api.tasks.purge_idempotency_keys",  # kept API_IDEMPOTENCY_KEY_HOURS
        "schedule": {"crontab": {"minute": 17}},
    },
    "outbox-relay": {
        "task": "outbox.tasks.outbox_relay",  # tasks whose publishing after their commit failed
        "schedule": float(env("OUTBOX_RELAY_SECONDS", "10")),
    },
    "outbox-redispatch": {
        "task": "outbox.tasks.outbox_redispatch",  # events whose dispatch was lost
        "schedule": 60.0,
    },
    "webhooks-sweep": {
        "task": "api.webhooks.tasks.webhooks_sweep",  # due redeliveries
        "schedule": 60.0,
    },
}
CELERY_TIMEZONE = TIME_ZONE

# Hosts prepared by hand (Host.management "manual"): once an operator marked the order prepared,
# the worker confirms readiness with an SSH banner from every such host within the timeout,
# checked again with a growing pause (5 s, 10 s, ... capped at 5 min) up to the limit.
READINESS_TIMEOUT_SECONDS = float(env("READINESS_TIMEOUT_SECONDS", "5"))
READINESS_MAX_ATTEMPTS = int(env("READINESS_MAX_ATTEMPTS", "8"))

# Hosts the worker manages over SSH (rental/hosts/): the administrative login's private key is
# this file (never in the database); tenant accounts are named with this prefix (the demo's
# "grdemo-", the tests' a random one); every SSH connection and playbook run has a deadline; one
# job at a time per host through a lease renewed while it works; a failed teardown or
# provisioning is tried again after a pause up to HOSTS_MAX_ATTEMPTS, then waits for an operator.
HOSTS_ADMIN_KEY_FILE = env("HOSTS_ADMIN_KEY_FILE", "")
HOSTS_ACCOUNT_PREFIX = env("HOSTS_ACCOUNT_PREFIX", "gr-")
HOSTS_CONNECT_TIMEOUT_SECONDS = int(env("HOSTS_CONNECT_TIMEOUT_SECONDS", "5"))
HOSTS_PLAYBOOK_TIMEOUT_SECONDS = int(env("HOSTS_PLAYBOOK_TIMEOUT_SECONDS", "200"))
HOSTS_LEASE_SECONDS = int(env("HOSTS_LEASE_SECONDS", "60"))
HOSTS_MAX_ATTEMPTS = int(env("HOSTS_MAX_ATTEMPTS", "3"))
HOSTS_RETRY_SECONDS = int(env("HOSTS_RETRY_SECONDS", "20"))
# One queue per kind of work (config/queues.py: payments, hosts, webhooks, emails and the rest),
# each with workers of its own (Procfile.dev), so a slow webhook receiver or a dead host never
# delays a payment confirmation.
CELERY_TASK_DEFAULT_QUEUE = DEFAULT_QUEUE
CELERY_TASK_ROUTES = task_routes()
# The first SSH port of the demo hosts (manage.py demo_hosts listens from there on 127.0.0.1).
DEMO_SSH_PORT = int(env("DEMO_SSH_PORT", "2222"))

# Crypto payments. Networks and assets are in payments/chain/networks.py; a network is enabled only
# when its RPC URL is set (RPC_URL_ETHEREUM, RPC_URL_BASE, RPC_URL_POLYGON, RPC_URL_ARBITRUM,
# RPC_URL_LOCAL). The default xpub comes from the well-known anvil test mnemonic: TEST ONLY,
# refused by production settings.
TEST_ONLY_PAYMENT_XPUB = (  # m/44'/60'/1' of "test test ... junk"
    "xpub6Ce9NcJvTk372KjsGfWqbcex5DumjpNquQLApoeQUavSCjEc823BV1tb4rXU"
    "uPuht8h2hSxkg2EXUaKUJmniJvRZAELxypsCzBFdtosmV76"
)  # fmt: skip
PAYMENT_XPUB = env("PAYMENT_XPUB", TEST_ONLY_PAYMENT_XPUB)
PAYMENT_NETWORK_KEYS = ("ethereum", "base", "polygon", "arbitrum", "local")
PAYMENT_RPC_URLS = {key: env(f"RPC_URL_{key.upper()}") for key in PAYMENT_NETWORK_KEYS}
PAYMENT_CONFIRMATIONS = {
    key: int(env(f"CONFIRMATIONS_{key.upper()}"))
    for key in PAYMENT_NETWORK_KEYS
    if env(f"CONFIRMATIONS_{key.upper()}")
}
PAYMENT_EXPIRY_MINUTES = int(env("PAYMENT_EXPIRY_MINUTES", "30"))
PAYMENT_MONITOR_HOURS = int(env("PAYMENT_MONITOR_HOURS", "24"))
# An order awaiting payment with no live crypto payment releases its lots after this long.
ORDER_HOLD_MINUTES = int(env("ORDER_HOLD_MINUTES", "30"))
# Orders awaiting payment one customer may have at once.
MAX_UNPAID_ORDERS = int(env("MAX_UNPAID_ORDERS", "3"))
# A paid order still waiting for its cards (paid or provisioning) this long after it was paid
# may be ended early by an operator, its whole price credited back (rental.refunds).
EARLY_END_WAITING_HOURS = int(env("EARLY_END_WAITING_HOURS", "24"))
PAYMENT_DECLARED_STALE_MINUTES = int(env("PAYMENT_DECLARED_STALE_MINUTES", "60"))
PAYMENT_SCAN_INTERVAL_SECONDS = int(env("PAYMENT_SCAN_INTERVAL_SECONDS", "5"))
# A scan's claim on a network's cursor, renewed while it reads: a scan killed mid-way is taken
# over by the next one within this time plus one scan interval.
PAYMENT_SCAN_LEASE_SECONDS = int(env("PAYMENT_SCAN_LEASE_SECONDS", "20"))
PAYMENT_RPC_TIMEOUT_SECONDS = int(env("PAYMENT_RPC_TIMEOUT_SECONDS", "10"))
TOP_UP_MINIMUM_USD = env("TOP_UP_MINIMUM_USD", "10.00")
# Withdrawals of the balance: the smallest a customer may ask for, and how often the worker
# looks again at the transfers finance entered (they wait for the network's confirmations).
WITHDRAWAL_MIN_USD = env("WITHDRAWAL_MIN_USD", "10.00")
WITHDRAWAL_CHECK_INTERVAL_SECONDS = int(env("WITHDRAWAL_CHECK_INTERVAL_SECONDS", "30"))
# A manual balance adjustment above this amount (USD) asks finance for the authenticator code again.
FINANCE_STEP_UP_THRESHOLD_USD = env("FINANCE_STEP_UP_THRESHOLD_USD", "500.00")
# The local chain (anvil) and its test stablecoin: `manage.py local_chain_setup` deploys the
# token and writes this file; LOCAL_TOKEN_ADDRESS overrides it.
LOCAL_CHAIN_FILE = VAR_DIR / "local-chain.json"
# Seconds between the local chain's blocks: scripts/local-chain gives anvil the same variable.
# The payment page polls at the pace of the payment's network (payments/chain/networks.py).
LOCAL_CHAIN_BLOCK_TIME_SECONDS = float(env("ANVIL_BLOCK_TIME", "2"))
LOCAL_TOKEN_ADDRESS = env("LOCAL_TOKEN_ADDRESS")

# Webhooks (api/webhooks/). Events written to the outbox go to these handlers after the commit.
# Web processes do not load Celery: their commits notify the relay process (`manage.py
# outbox_relay`) on this PostgreSQL channel, and it publishes their tasks. It also looks every
# OUTBOX_RELAY_WAIT_SECONDS without a notification (the embedded SQLite default has none).
OUTBOX_NOTIFY_CHANNEL = env("OUTBOX_NOTIFY_CHANNEL", "gpu_rental_outbox")
OUTBOX_RELAY_WAIT_SECONDS = float(env("OUTBOX_RELAY_WAIT_SECONDS", "1"))
OUTBOX_HANDLERS = ["api.webhooks.services.fanout.webhook_fan_out"]
# Off in production: URLs whose host is or resolves to a loopback, private, link-local,
# multicast, reserved or unspecified address are refused, at save time and at every delivery.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env_bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False)
WEBHOOK_CONNECT_TIMEOUT_SECONDS = 3.0
WEBHOOK_READ_TIMEOUT_SECONDS = 5.0
# The whole attempt (DNS, connect, request, answer) ends by then whatever the receiver does;
# the attempt's lease (when the sweep may send it again) is this plus 30 s.
WEBHOOK_ATTEMPT_DEADLINE_SECONDS = 15.0
WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024  # read, then discarded
# Attempts to one endpoint at once: a slow receiver holds at most this many webhook workers;
# its other deliveries wait for the minute sweep.
WEBHOOK_MAX_ATTEMPTS_IN_FLIGHT_PER_ENDPOINT = int(
    env("WEBHOOK_MAX_ATTEMPTS_IN_FLIGHT_PER_ENDPOINT", "2")
)
# A delivery queued this long ago and never taken by a worker: its message is taken for lost
# (a broker flushed or failed over) and the sweep queues it again. Longer than any backlog
# of the webhooks' queue should be; a message waiting for its ETA is younger than this.
WEBHOOK_QUEUED_MESSAGE_LOST_AFTER_SECONDS = 900
# Redeliveries after a failed attempt: 10 s, 1 min, then 6 × 10 min; then the delivery gives up.
WEBHOOK_RETRY_SCHEDULE_SECONDS = (10, 60, *(600,) * 6)
# An endpoint is disabled, and its owner emailed, after this many events given up in a row
# (each one failed 9 times over about an hour); any delivered event resets the count.
WEBHOOK_DISABLE_AFTER_GAVE_UP = int(env("WEBHOOK_DISABLE_AFTER_GAVE_UP", "3"))
# After a secret is rotated, deliveries carry the old secret's signature beside the new one's
# for this long, so a receiver can switch secrets without refusing a delivery.
WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS = int(
    env("WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS", str(24 * 3600))
)
# Replaying events since a time reaches back at most this many days, and this many events.
WEBHOOK_REPLAY_MAX_DAYS = 30
WEBHOOK_REPLAY_MAX_EVENTS = 1000

# Ordering.
ORDER_MAX_LOTS = 10
ORDER_DURATIONS_DAYS = (3, 7, 30)

# The REST API (api/): tokens from the account page, problem+json errors, cursor pages, a
# per-token rate limit, Idempotency-Key on POSTs (kept 24 h), the OpenAPI 3.1 schema.
API_RATE_LIMIT = env("API_RATE_LIMIT", "120/min")
API_IDEMPOTENCY_KEY_HOURS = 24
# A claimed key whose request never finished (its process died) is taken over after this.
# Keep it well above the web worker's timeout (gunicorn --timeout, 30 s by default); a request
# that outlives its claim anyway is rolled back when it finishes (api.idempotency).
API_IDEMPOTENCY_CLAIM_SECONDS = 300
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["api.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.HasScope"],
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.TokenRateThrottle"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.CursorPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.JSONParser"],  # nesting bounded (F2)
    "EXCEPTION_HANDLER": "api.problems.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "GPU rental API",
    "DESCRIPTION": (
        "Order GPU lots, pay and follow them from scripts. Authenticate with "
        "`Authorization: Bearer <token>` (tokens are created on the account page); errors are "
        "RFC 9457 problem details; every POST accepts an `Idempotency-Key`."
    ),
    "VERSION": "1.0.0",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # Hooks: the Problem and FieldError components and every operation's problem answers
    # (api/schema.py), the links between operations (api/schema_links.py), the live catalogue's
    # GPU models as examples (api/schema_catalogue.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.schema.add_problem_responses",
        "api.schema_links.add_links",
        "api.schema_catalogue.add_catalogue_examples",
    ],
    # Choice sets used by fields of several names: one component name each.
    "ENUM_NAME_OVERRIDES": {
        "OrderStatusEnum": "rental.models.OrderStatus",
        "ExtensionStatusEnum": "rental.models.ExtensionStatus",
        "PaymentStatusEnum": "payments.crypto.selectors.state.PaymentState",
        "WithdrawalStatusEnum": "payments.models.WithdrawalStatus",
        "TransactionKindEnum": "payments.models.TransactionKind",
        "DecisionKindEnum": "pilot.models.DecisionKind",
        "WebhookEventEnum": "api.webhooks.serializers.EVENT_CHOICES",
        "ApiTokenStatusEnum": "api.resources.tokens.TokenState.CHOICES",
        "EventTypeEnum": "api.webhooks.serializers.ALL_EVENT_CHOICES",
        "PaymentPurposeEnum": "payments.models.PaymentPurpose",
        "NetworkEnum": "api.resources.serializers.NETWORK_CHOICES",
        "AssetEnum": "api.resources.serializers.ASSET_CHOICES",
        "AccessStateEnum": "rental.hosts.models.TenancyStatus",
    },
}

# Operability (monitoring/): the watcher's limits for /readyz, the operators' banner and the
# metrics; the banner's threshold for a task failing again and again; the Prometheus scrape at
# /metrics, off unless enabled, and then only with `Authorization: Bearer <METRICS_TOKEN>`.
WATCHER_MAX_SCAN_AGE_SECONDS = int(env("WATCHER_MAX_SCAN_AGE_SECONDS", "120"))
WATCHER_MAX_LAG_BLOCKS = int(env("WATCHER_MAX_LAG_BLOCKS", "50"))
TASK_FAILURE_ALERT_THRESHOLD = int(env("TASK_FAILURE_ALERT_THRESHOLD", "3"))
METRICS_ENABLED = env_bool("METRICS_ENABLED", False)
METRICS_TOKEN = env("METRICS_TOKEN", "")

# Logs: one line per event, with order and payment references in the message and as fields;
# LOG_FORMAT=json writes JSON lines (config/logging.py), the Celery worker's too.
LOG_FORMAT = env("LOG_FORMAT", "plain")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "config.logging.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "plain",
        }
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
}
# Left to itself the worker replaces the root logger's handlers with its own plain format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = LOG_FORMAT != "json"
