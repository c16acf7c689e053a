"""collectstatic takes from the npm packages the files the templates name and nothing else
(config/staticfiles.py): WhiteNoise keeps an entry for every collected file in each web worker.
"""

import re
from pathlib import Path

from django.contrib.staticfiles import finders
from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent
VENDOR_REFERENCE = re.compile(r"""\{% static ['"](vendor/[^'"]+)['"] %\}""")


def vendor_files_the_templates_name() -> set[str]:
    return {
        match
        for template in (ROOT / "templates").rglob("*.html")
        for match in VENDOR_REFERENCE.findall(template.read_text())
    }


def test_collectstatic_takes_the_vendor_files_the_templates_name_and_no_others(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path
    named = vendor_files_the_templates_name()
    assert {"vendor/pico/pico.min.css", "vendor/htmx/htmx.min.js"} <= named  # the layout's

    call_command("collectstatic", "--noinput", verbosity=0)

    collected = {
        str(path.relative_to(tmp_path))
        for path in (tmp_path / "vendor").rglob("*")
        if path.is_file()
    }
    # The stylesheet's source map, which it names, comes with it.
    assert collected == named | {"vendor/swagger-ui/swagger-ui.css.map"}
    for name in named:
        source = Path(finders.find(name))
        assert (tmp_path / name).read_bytes() == source.read_bytes()
        assert source.is_relative_to(settings.NODE_MODULES)


def test_collectstatic_leaves_out_the_static_files_of_the_apps_no_page_uses(settings, tmp_path):
    """Django REST framework's (the browsable API is off) and django-htmx's; the admin's and
    allauth's are collected as before, and Django finds no file of the others to serve."""
    settings.STATIC_ROOT = tmp_path

    call_command("collectstatic", "--noinput", verbosity=0)

    collected = {path.name for path in tmp_path.iterdir()}
    assert {"admin", "mfa", "account", "js", "css", "vendor"} <= collected
    assert not collected & {"rest_framework", "django_htmx"}
    assert finders.find("admin/css/base.css")
    assert finders.find("rest_framework/css/default.css", find_all=True) == []
    assert finders.find("django_htmx/django-htmx.js", find_all=True) == []


def test_a_file_no_finder_has_is_not_found():
    # Before: the vendor finder answered None, which finders.find() took for a match ([None]).
    assert finders.find("vendor/no-such-package/missing.js") is None
    assert finders.find("vendor/no-such-package/missing.js", find_all=True) == []
    assert finders.find("vendor/htmx/htmx.min.js")  # one the templates name is found
