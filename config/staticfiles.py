"""The front-end files the templates use, each taken from its npm package (VENDOR_STATIC_FILES in
the settings: {prefix: (package directory, [file names])}), instead of the packages' whole
directories.

Every collected file is an entry in WhiteNoise's table, which each web worker builds at start
and keeps: Pico's 240 colour and class-less variants, htmx's other builds and extensions and
swagger-ui's other bundles were two thirds of them (about 1 MB of every worker; issue 24). The
apps' static files likewise, but for the apps in STATIC_FILES_UNUSED_APPS (AppDirectoriesFinder
below): Django REST framework's and django-htmx's were more than half of what was left.
"""

from django.apps import apps
from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.finders import BaseFinder
from django.contrib.staticfiles.utils import matches_patterns
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage


class VendorFilesFinder(BaseFinder):
    def __init__(self, app_names=None, *args, **kwargs):
        self.files = {}  # "vendor/pico/pico.min.css" -> (storage, "pico.min.css")
        for prefix, (directory, names) in settings.VENDOR_STATIC_FILES.items():
            storage = FileSystemStorage(location=directory)
            storage.prefix = prefix  # collectstatic puts the file under it
            for name in names:
                self.files[f"{prefix}/{name}"] = (storage, name)
        super().__init__(*args, **kwargs)

    def check(self, **kwargs):
        return [
            Error(
                f"{storage.path(name)} does not exist (VENDOR_STATIC_FILES).",
                hint="Install the front-end packages: npm ci.",
                id="config.E001",
            )
            for storage, name in self.files.values()
            if not storage.exists(name)
        ]

    def find(self, path, find_all=False):
        entry = self.files.get(path)
        match = entry[0].path(entry[1]) if entry and entry[0].exists(entry[1]) else None
        if find_all:
            return [match] if match else []
        return match or []  # as Django's finders: finders.find() takes None for a match

    def list(self, ignore_patterns):
        for storage, name in self.files.values():
            if storage.exists(name) and not matches_patterns(name, ignore_patterns):
                yield name, storage


class AppDirectoriesFinder(finders.AppDirectoriesFinder):
    """Django's, without the apps in STATIC_FILES_UNUSED_APPS."""

    def __init__(self, app_names=None, *args, **kwargs):
        if app_names is None:
            unused = set(settings.STATIC_FILES_UNUSED_APPS)
            app_names = [app.name for app in apps.get_app_configs() if app.name not in unused]
        super().__init__(app_names, *args, **kwargs)
