"""The test database as a copy of a migrated template (PostgreSQL), for tests/conftest.py's
`django_db_setup`.

Migrating an empty database takes 20-70 s on a busy 2-core machine, and every pytest-xdist
worker needs a database of its own. So the migrated database is made once, as a template named
after a hash of every installed app's migration files (test_gpu_rental_tpl_<hash>), kept
between runs, and each worker's test database is a copy of it (CREATE DATABASE ... TEMPLATE,
about a second). A change to any migration names another template; `pytest --create-db`
builds it again. The template is built under a temporary name and renamed when complete, under
an advisory lock, so a run killed mid-way or two runs at once never use half of one; it takes
no connections (datallowconn false), so that copying it is never refused for a session left
open on it. Test databases of killed runs on this machine are dropped on the way.
post_migrate runs again on every copy: the groups and permissions the apps grant
there come from today's code, not the template's.
"""

import contextlib
import hashlib
import os
import re
from pathlib import Path

import psycopg
from django.apps import apps
from django.conf import settings
from django.core.management.sql import emit_post_migrate_signal
from django.db import connection

KEEP_TEMPLATES = 4  # the newest templates of other migration states are kept (other branches)


def migrations_hash() -> str:
    """A hash of every installed app's migration files (names and contents)."""
    digest = hashlib.sha256()
    for app_config in sorted(apps.get_app_configs(), key=lambda config: config.label):
        folder = Path(app_config.path) / "migrations"
        for path in sorted(folder.glob("*.py")):
            digest.update(f"{app_config.label}/{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def _maintenance() -> psycopg.Connection:
    """An autocommit connection to the server's `postgres` database."""
    params = connection.settings_dict
    return psycopg.connect(
        dbname="postgres",
        user=params.get("USER") or None,
        password=params.get("PASSWORD") or None,
        host=params.get("HOST") or None,
        port=params.get("PORT") or None,
        autocommit=True,
    )


def _exists(admin: psycopg.Connection, name: str) -> bool:
    found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
    return found.fetchone() is not None


def _build(admin: psycopg.Connection, template: str, verbosity: int) -> None:
    """Migrate a fresh database under a temporary name, then rename it to `template`."""
    building = f"{template}_building"
    admin.execute(f"DROP DATABASE IF EXISTS {_quote(building)} WITH (FORCE)")
    original_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict.setdefault("TEST", {})
    test_name = test_settings.get("NAME")
    test_settings["NAME"] = building
    try:
        connection.creation.create_test_db(verbosity=verbosity, autoclobber=True)
    finally:
        connection.close()
        test_settings["NAME"] = test_name
        settings.DATABASES[connection.alias]["NAME"] = original_name
        connection.settings_dict["NAME"] = original_name
    admin.execute(f"ALTER DATABASE {_quote(building)} RENAME TO {_quote(template)}")
    admin.execute(f"ALTER DATABASE {_quote(template)} WITH ALLOW_CONNECTIONS false")


def _drop_old_templates(admin: psycopg.Connection, prefix: str, keep: str) -> None:
    """Templates of other migration states beyond the newest KEEP_TEMPLATES (by oid)."""
    rows = admin.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE %s AND datname <> %s"
        " AND datname NOT LIKE '%%\\_building' ORDER BY oid DESC",
        [prefix.replace("_", "\\_") + "%", keep],
    ).fetchall()
    for (name,) in rows[KEEP_TEMPLATES - 1 :]:
        with contextlib.suppress(psycopg.Error):  # another run is copying it now: next time
            admin.execute(f"DROP DATABASE {_quote(name)}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _drop_abandoned(admin: psycopg.Connection, base: str) -> None:
    """Test databases of runs on this machine that were killed before their end
    (test_<base>_p<pid>[_gw<k>], named by tests/isolation.py, whose pytest process is
    gone). Only for a server on this machine: a pid means nothing elsewhere."""
    if (connection.settings_dict.get("HOST") or "localhost") not in (
        "localhost",
        "127.0.0.1",
        "::1",
    ):
        return
    pattern = re.compile(rf"test_{re.escape(base)}_p(\d+)(_gw\d+)?")
    for (name,) in admin.execute("SELECT datname FROM pg_database").fetchall():
        found = pattern.fullmatch(name)
        if found and not _alive(int(found.group(1))):
            with contextlib.suppress(psycopg.Error):
                admin.execute(f"DROP DATABASE {_quote(name)} WITH (FORCE)")


def create_test_db_from_template(*, verbosity: int, rebuild: bool) -> str:
    """Create this process's test database (the settings' TEST NAME) as a copy of the migrated
    template, building the template first if needed; switch the connection to it. Its name."""
    base = connection.settings_dict["NAME"]
    prefix = f"test_{base}_tpl_"
    template = f"{prefix}{migrations_hash()}"
    target = connection.creation._get_test_db_name()
    with _maintenance() as admin:
        # One builder per template at a time; the others wait, then copy what it built.
        admin.execute("SELECT pg_advisory_lock(hashtext(%s))", [template])
        try:
            if rebuild and _exists(admin, template):
                admin.execute(f"DROP DATABASE {_quote(template)} WITH (FORCE)")
            if not _exists(admin, template):
                _build(admin, template, verbosity)
                _drop_old_templates(admin, prefix, keep=template)
            _drop_abandoned(admin, base)
            admin.execute(f"DROP DATABASE IF EXISTS {_quote(target)} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {_quote(target)} TEMPLATE {_quote(template)}")
        finally:
            admin.execute("SELECT pg_advisory_unlock(hashtext(%s))", [template])
    connection.close()
    settings.DATABASES[connection.alias]["NAME"] = target
    connection.settings_dict["NAME"] = target
    emit_post_migrate_signal(verbosity=max(verbosity - 1, 0), interactive=False, db="default")
    return base


def drop_test_db(base: str) -> None:
    """Drop this process's test database at the end of its run and point the connection back
    at `base`. WITH (FORCE): a connection the run left open (a subprocess or a server thread
    still closing) must not fail the run after every test passed — seen once with two runs at
    once: "database … is being accessed by other users" at the last teardown."""
    from django.db import connections

    target = connection.settings_dict["NAME"]
    connections.close_all()
    settings.DATABASES[connection.alias]["NAME"] = base
    connection.settings_dict["NAME"] = base
    with _maintenance() as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {_quote(target)} WITH (FORCE)")
