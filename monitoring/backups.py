"""Backups of the whole database, for `manage.py backup` and `manage.py restore`: PostgreSQL
through pg_dump / pg_restore (custom format: one consistent snapshot, restored in one
transaction), the embedded SQLite default through SQLite's online backup."""

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path


class BackupError(Exception):
    pass


def _is_postgresql(settings_dict: dict) -> bool:
    return settings_dict["ENGINE"].endswith("postgresql")


def _pg_arguments(settings_dict: dict) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ}
    if settings_dict.get("PASSWORD"):
        env["PGPASSWORD"] = settings_dict["PASSWORD"]
    args = []
    for option, key in (("--host", "HOST"), ("--port", "PORT"), ("--username", "USER")):
        if settings_dict.get(key):
            args += [option, str(settings_dict[key])]
    return args, env


def _run(argv: list[str], env: dict[str, str]) -> None:
    tool = shutil.which(argv[0])
    if tool is None:
        raise BackupError(f"{argv[0]} is not installed (the distribution's postgresql-client)")
    # The arguments are the settings' and the operator's own file name, never a shell.
    result = subprocess.run([tool, *argv[1:]], env=env, capture_output=True, text=True)  # noqa: S603
    if result.returncode != 0:
        raise BackupError(f"{argv[0]} failed: {result.stderr.strip()[-2000:]}")


def backup_database(settings_dict: dict, file: Path) -> int:
    """Write the backup to `file` (replaced only once complete); its size in bytes."""
    file = Path(file)
    if not file.parent.is_dir():
        raise BackupError(f"no folder {file.parent} to write the backup in")
    partial = file.with_name(file.name + ".partial")
    if _is_postgresql(settings_dict):
        args, env = _pg_arguments(settings_dict)
        _run(
            ["pg_dump", "--format=custom", "--no-owner", "--no-privileges", *args,
             f"--file={partial}", settings_dict["NAME"]],
            env,
        )  # fmt: skip
    else:
        source = sqlite3.connect(settings_dict["NAME"])
        target = sqlite3.connect(partial)
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
    partial.replace(file)
    return file.stat().st_size


def _pg_has_tables(settings_dict: dict) -> bool:
    import psycopg

    with psycopg.connect(
        dbname=settings_dict["NAME"],
        user=settings_dict.get("USER") or None,
        password=settings_dict.get("PASSWORD") or None,
        host=settings_dict.get("HOST") or None,
        port=settings_dict.get("PORT") or None,
    ) as conn:
        row = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
    return row[0] > 0


def restore_database(settings_dict: dict, file: Path, *, replace: bool) -> None:
    file = Path(file)
    if not file.is_file():
        raise BackupError(f"no backup file at {file}")
    if _is_postgresql(settings_dict):
        if _pg_has_tables(settings_dict) and not replace:
            raise BackupError(
                f"the database {settings_dict['NAME']} is not empty: restore into a new "
                "database, or give --replace to drop what it holds first"
            )
        args, env = _pg_arguments(settings_dict)
        clean = ["--clean", "--if-exists"] if replace else []
        _run(
            ["pg_restore", "--no-owner", "--no-privileges", "--exit-on-error",
             "--single-transaction", *clean, *args, f"--dbname={settings_dict['NAME']}",
             str(file)],
            env,
        )  # fmt: skip
        return
    target = Path(settings_dict["NAME"])
    if target.exists() and not replace:
        with sqlite3.connect(target) as existing:
            tables = existing.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
            ).fetchone()[0]
        if tables:
            raise BackupError(f"{target} is not empty: give --replace to overwrite it")
    with sqlite3.connect(file) as check:
        if check.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            raise BackupError(f"{file} is not a sound SQLite database")
    partial = target.with_name(target.name + ".restoring")
    shutil.copyfile(file, partial)
    partial.replace(target)


def restored_counts() -> dict[str, int]:
    """What the database holds now, for the restore's report."""
    from payments.models import CryptoPayment, LedgerEntry, LedgerTransaction, Receipt
    from rental.models import Order

    return {
        "orders": Order.objects.count(),
        "payments": CryptoPayment.objects.count(),
        "ledger transactions": LedgerTransaction.objects.count(),
        "ledger entries": LedgerEntry.objects.count(),
        "receipts": Receipt.objects.count(),
    }
