# The Celery app lives in config/celery_app.py and is loaded only by the processes that run or
# publish tasks (workers, beat, the outbox relay, the tests): `celery -A config.celery_app`. Web
# processes never import it (outbox/messages.py).
from config.lazy_modules import defer_modules, defer_package_init

# allauth's MFA imports its WebAuthn helpers (fido2, cryptography: ~12 MB) at startup although
# WebAuthn is not one of MFA_SUPPORTED_TYPES; loaded on their first use (config/lazy_modules.py).
defer_modules(["allauth.mfa.webauthn.internal.auth"])
# redis-py's package __init__ imports its asyncio, cluster, sentinel and keyspace-notification
# clients (~3 MB), which the cache (config/cache.py: the classes from their own modules) never
# uses: each package's __init__ runs when something asks it for a name (kombu, Celery's workers).
defer_package_init(["redis", "redis.asyncio"])
