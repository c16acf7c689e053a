"""Every process names its settings: a worker started without DJANGO_SETTINGS_MODULE used to
run the development settings silently (DEBUG, a console mailer marking emails sent, the webhook
address guard off, an insecure key). `make run`, `make pay` and the tests set it; a server's
units and compose file set config.settings.production."""

import os

MESSAGE = (
    "DJANGO_SETTINGS_MODULE is not set, and no settings are assumed.\n"
    "  On a server:             DJANGO_SETTINGS_MODULE=config.settings.production\n"
    "  On a developer machine:  DJANGO_SETTINGS_MODULE=config.settings.dev "
    "(`make run` sets it for its processes)"
)


def require_settings_module() -> str:
    """The settings module named in the environment; exits with MESSAGE when there is none."""
    module = os.environ.get("DJANGO_SETTINGS_MODULE", "").strip()
    if not module:
        raise SystemExit(MESSAGE)
    return module
