"""HostStateChange's from_state/to_state are named from_status/to_status like every audit row
(statemachine.audit.StatusChange); the columns keep their names: no change in the database."""

from django.db import migrations, models

HOST_STATES = [
    ("unchecked", "Not checked yet"),
    ("available", "Available"),
    ("draining", "Draining"),
    ("maintenance", "Maintenance"),
    ("out_of_service", "Out of service"),
    ("host_key_changed", "Host key changed"),
]


class Migration(migrations.Migration):
    dependencies = [("rental", "0009_hosts_tenancies")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField("hoststatechange", "from_state", "from_status"),
                migrations.RenameField("hoststatechange", "to_state", "to_status"),
                migrations.AlterField(
                    model_name="hoststatechange",
                    name="from_status",
                    field=models.CharField(
                        blank=True,
                        choices=HOST_STATES,
                        db_column="from_state",
                        max_length=16,
                        verbose_name="from",
                    ),
                ),
                migrations.AlterField(
                    model_name="hoststatechange",
                    name="to_status",
                    field=models.CharField(
                        choices=HOST_STATES,
                        db_column="to_state",
                        max_length=16,
                        verbose_name="to",
                    ),
                ),
            ],
            database_operations=[],
        )
    ]
