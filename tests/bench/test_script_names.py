"""A script in bench/ runs with bench/ first on sys.path, so a script named like one of the
project's packages or a standard library module is imported in its place by every other script
there. Seen: bench/api.py made `django.setup()` in bench/http_parts.py import it as the `api`
app (TypeError: issubclass() arg 1 must be a class)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_no_bench_module_shadows_a_project_package_or_the_standard_library():
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")}
    shadowing = sorted(
        path.name
        for path in (ROOT / "bench").glob("*.py")
        if path.stem in packages or path.stem in sys.stdlib_module_names
    )
    assert shadowing == []
