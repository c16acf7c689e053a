"""Production settings with bench/plain_urls.py's plain peers of the customer pages added, and
their templates (bench/plain_templates/) (bench/plain_pages.py)."""

import copy

from config.settings.production import *  # noqa: F403
from config.settings.production import BASE_DIR, TEMPLATES

ROOT_URLCONF = "bench.plain_urls"
TEMPLATES = copy.deepcopy(TEMPLATES)
TEMPLATES[0]["DIRS"] = [*TEMPLATES[0]["DIRS"], BASE_DIR / "bench" / "plain_templates"]
