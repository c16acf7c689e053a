"""Modules executed on the first access to one of their attributes instead of when they are
imported, installed by config/__init__.py before Django loads anything.

allauth's MFA imports its WebAuthn helpers, and with them fido2 and cryptography (about 12 MB of
a web worker), at startup even where WebAuthn is not one of MFA_SUPPORTED_TYPES; deferred
(importlib's LazyLoader), a process loads them only if WebAuthn is used.

A package can have only its `__init__` deferred (`defer_package_init`): the package is in
sys.modules with its `__path__`, so its submodules import as usual (also as `from package
import submodule`), and the `__init__` runs on the first other name asked of the package.
LazyLoader cannot do that: importing a submodule reads the package's `__path__`, which runs a
lazy package at once. redis-py's `import redis` imports its asyncio client, cluster, sentinel
and keyspace notifications (about 3 MB of a web worker), which the cache's synchronous client
(config/cache.py, which takes its classes from their modules) never uses.

The rest of what web workers leave out is in config/deferred.py. Standard library only: this
runs before the settings.
"""

import importlib.abc
import importlib.util
import sys
import threading


class _DeferredInitLoader(importlib.abc.Loader):
    """Creates the package's module as its own loader would, and runs its `__init__` on the
    first attribute not already in the module (its `__path__`, `__name__`, `__spec__` and the
    submodules imported meanwhile are)."""

    def __init__(self, loader):
        self.loader = loader
        self.lock = threading.RLock()

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        loader, lock = self.loader, self.lock

        def __getattr__(name):
            # A submodule is imported as `from package import submodule` would without the
            # `__init__` (redis.client's own `from redis import _himport_exec`).
            if not name.startswith("__"):
                try:
                    spec = importlib.util.find_spec(f"{module.__name__}.{name}")
                except (ImportError, ValueError):
                    spec = None
                if spec is not None:
                    return importlib.import_module(f"{module.__name__}.{name}")
            with lock:
                if module.__dict__.get("__getattr__") is __getattr__:
                    del module.__getattr__  # the package's own, if any, replaces it
                    module.__loader__ = module.__spec__.loader = loader
                    try:
                        loader.exec_module(module)
                    except BaseException:
                        module.__getattr__ = __getattr__
                        module.__loader__ = module.__spec__.loader = self
                        raise
            return getattr(module, name)

        module.__getattr__ = __getattr__


class _DeferringFinder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.lazy_modules = set()
        self.deferred_inits = set()

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.lazy_modules and fullname not in self.deferred_inits:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = getattr(finder, "find_spec", lambda *args: None)(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    if fullname in self.deferred_inits:
                        if spec.submodule_search_locations is not None:  # a package
                            spec.loader = _DeferredInitLoader(spec.loader)
                    else:
                        spec.loader = importlib.util.LazyLoader(spec.loader)
                return spec
        return None


def _finder() -> _DeferringFinder:
    for finder in sys.meta_path:
        if isinstance(finder, _DeferringFinder):
            return finder
    finder = _DeferringFinder()
    sys.meta_path.insert(0, finder)
    return finder


def defer_modules(names) -> None:
    """Executes each named module on first attribute access (before it is first imported)."""
    _finder().lazy_modules.update(names)


def defer_package_init(names) -> None:
    """Runs each named package's `__init__` on the first attribute asked of the package (before
    it is first imported); its submodules import as usual meanwhile."""
    _finder().deferred_inits.update(names)
