"""Production: every secret comes from the environment and has no default."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import PAYMENT_XPUB, TEST_ONLY_PAYMENT_XPUB, env, env_bool

DEBUG = False
SECRET_KEY = env("SECRET_KEY")
if not SECRET_KEY or SECRET_KEY.startswith("insecure-"):
    raise ImproperlyConfigured("SECRET_KEY must be set in the environment for production.")
if env("DATABASE_URL") is None:
    raise ImproperlyConfigured("DATABASE_URL must be set in the environment for production.")
if env("EMAIL_HOST") is None:
    raise ImproperlyConfigured("EMAIL_HOST must be set in production: customers need their emails.")
if env("REDIS_URL") is None:
    raise ImproperlyConfigured("REDIS_URL must be set in production (cache, rate limits, broker).")
if env_bool("METRICS_ENABLED", False) and len(env("METRICS_TOKEN", "")) < 32:
    raise ImproperlyConfigured("METRICS_ENABLED needs a METRICS_TOKEN of at least 32 characters.")

if PAYMENT_XPUB == TEST_ONLY_PAYMENT_XPUB:
    raise ImproperlyConfigured(
        "PAYMENT_XPUB is the test-only xpub of the public anvil mnemonic: set your own."
    )

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = int(env("SECURE_HSTS_SECONDS", "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
