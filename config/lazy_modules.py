"""Modules executed on the first access to one of their attributes instead of when they are
imported (importlib's LazyLoader), installed by config/__init__.py before Django loads anything.

allauth's MFA imports its WebAuthn helpers, and with them fido2 and cryptography (about 12 MB of
a web worker), at startup even where WebAuthn is not one of MFA_SUPPORTED_TYPES; deferred, a
process loads them only if WebAuthn is used. The rest of what web workers leave out is in
config/deferred.py. Standard library only: this runs before the settings.
"""

import importlib.abc
import importlib.util
import sys


class _DeferringFinder(importlib.abc.MetaPathFinder):
    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = getattr(finder, "find_spec", lambda *args: None)(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = importlib.util.LazyLoader(spec.loader)
                return spec
        return None


def defer_modules(names) -> None:
    """Executes each named module on first attribute access (before it is first imported)."""
    if not any(isinstance(finder, _DeferringFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _DeferringFinder(names))
