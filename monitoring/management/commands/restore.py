"""`manage.py restore FILE`: put a backup made by `manage.py backup` into the configured
database, which must be empty (a new database) unless --replace is given; then counts what it
holds. Stop the web, the workers and beat first."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from monitoring.backups import BackupError, restore_database, restored_counts


class Command(BaseCommand):
    help = "Restore FILE (from manage.py backup) into the configured, empty database."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--replace",
            action="store_true",
            help="drop what the database holds first (it must otherwise be empty)",
        )

    def handle(self, *args, file: Path, replace: bool = False, **options):
        try:
            restore_database(connection.settings_dict, file, replace=replace)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        connection.close()  # SQLite: the file was replaced under the connection
        counts = ", ".join(f"{count} {name}" for name, count in restored_counts().items())
        self.stdout.write(self.style.SUCCESS(f"Restored {file}: {counts}."))
