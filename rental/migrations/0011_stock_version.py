"""The stock version: one row that every committed change to what the catalogue shows bumps
(rental/stock.py).

PostgreSQL triggers, so no write can forget it (services, the admin, `update()`, bulk
inserts): a row trigger on each table notes in a transaction-local setting that the
transaction changed stock, and a constraint trigger deferred to COMMIT adds one to the
version, once per transaction. Taking the version row's lock at COMMIT, after every other
lock of the transaction, keeps the house's lock order (rental/locks.py) free of cycles.
Other databases get the table without triggers; rental/stock.py then never caches.
"""

import random

from django.db import migrations, models

# (table, the columns whose change changes the catalogue; None: any change)
STOCK_TABLES = (
    ("rental_gpumodel", None),
    ("rental_lotprice", None),
    ("rental_host", ("state", "cards", "gpu_model_id")),
    ("rental_cardallocation", ("host_id", "card_index", "released_at", "order_id")),
    ("rental_order", ("status", "lots", "gpu_model_id", "hold_until", "provisioning_issue")),
)

FUNCTIONS = """
CREATE OR REPLACE FUNCTION rental_stock_written() RETURNS trigger AS $$
BEGIN
    PERFORM set_config('rental.stock_written', txid_current()::text, true);
    RETURN NULL;
END $$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION rental_stock_bump() RETURNS trigger AS $$
BEGIN
    IF current_setting('rental.stock_bumped', true) IS DISTINCT FROM txid_current()::text THEN
        PERFORM set_config('rental.stock_bumped', txid_current()::text, true);
        UPDATE rental_stockversion SET value = value + 1 WHERE id = 1;
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
"""


def triggers_sql() -> str:
    statements = [FUNCTIONS]
    for table, columns in STOCK_TABLES:
        for event in ("INSERT", "UPDATE", "DELETE"):
            when = ""
            if event == "UPDATE" and columns:
                old = ", ".join(f"OLD.{column}" for column in columns)
                new = ", ".join(f"NEW.{column}" for column in columns)
                when = f" WHEN (({old}) IS DISTINCT FROM ({new}))"
            name = f"{table}_stock_{event.lower()}"
            statements.append(
                f"CREATE TRIGGER {name}_written AFTER {event} ON {table} "
                f"FOR EACH ROW{when} EXECUTE FUNCTION rental_stock_written();"
            )
            statements.append(
                f"CREATE CONSTRAINT TRIGGER {name}_bump AFTER {event} ON {table} "
                f"DEFERRABLE INITIALLY DEFERRED "
                f"FOR EACH ROW{when} EXECUTE FUNCTION rental_stock_bump();"
            )
    return "\n".join(statements)


def drop_sql() -> str:
    statements = []
    for table, _columns in STOCK_TABLES:
        for event in ("insert", "update", "delete"):
            for kind in ("written", "bump"):
                statements.append(
                    f"DROP TRIGGER IF EXISTS {table}_stock_{event}_{kind} ON {table};"
                )
    statements.append("DROP FUNCTION IF EXISTS rental_stock_written();")
    statements.append("DROP FUNCTION IF EXISTS rental_stock_bump();")
    return "\n".join(statements)


def create_triggers(apps, schema_editor):
    # A random start: entries a web process cached on another database's numbers never match.
    apps.get_model("rental", "StockVersion").objects.create(
        id=1,
        value=random.getrandbits(62),  # noqa: S311
    )
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(triggers_sql())


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(drop_sql())


class Migration(migrations.Migration):
    dependencies = [("rental", "0010_host_state_change_status_names")]

    operations = [
        migrations.CreateModel(
            name="StockVersion",
            fields=[
                ("id", models.PositiveSmallIntegerField(primary_key=True, serialize=False)),
                ("value", models.BigIntegerField()),
            ],
            options={"verbose_name": "stock version"},
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
