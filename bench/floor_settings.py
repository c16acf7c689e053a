"""Production settings with bench/floor_urls.py's two empty pages added (bench/http_floor.py)."""

from config.settings.production import *  # noqa: F403

ROOT_URLCONF = "bench.floor_urls"
