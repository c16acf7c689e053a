"""`manage.py backup FILE`: a consistent copy of the whole database in one file.

PostgreSQL: `pg_dump --format=custom` (one snapshot, taken while the site runs; restore it with
`manage.py restore`). The embedded SQLite default: SQLite's online backup into a new database
file. Exits 0 and prints what it saved, or non-zero with the tool's message."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from monitoring.backups import BackupError, backup_database


class Command(BaseCommand):
    help = "Write a backup of the database to FILE (pg_dump's custom format, or a SQLite file)."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options):
        try:
            size = backup_database(connection.settings_dict, file)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"Backup written: {file} ({size:,} bytes)"))
