"""The bare Django baseline of bench/http.py: one view, one `SELECT 1`, a one-line template.

Same database and the same connection settings as the application under measurement (the
bench passes them in BENCH_BARE_DATABASE, as the application's own settings resolved them), no
middleware, no installed app: what Django itself costs under the same gunicorn.
"""

import json
import os
from pathlib import Path

SECRET_KEY = "bench-only-bare-baseline"  # noqa: S105 - never served outside the bench
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "bench.bare.urls"
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
DATABASES = {"default": json.loads(os.environ["BENCH_BARE_DATABASE"])}
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [Path(__file__).resolve().parent / "templates"],
    }
]
USE_TZ = True
USE_I18N = False
