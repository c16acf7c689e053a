"""Receipts are issued once and never change: the database refuses to update or delete one,
and the receipt counter only moves forward (a number once issued is never issued again).

PostgreSQL and SQLite (the embedded default) both get the rules, as triggers.
"""

from django.db import migrations

POSTGRES_UP = """
CREATE FUNCTION receipt_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'receipts are never changed: % on % is refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = '23514';
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER receipt_append_only BEFORE UPDATE OR DELETE ON payments_receipt
    FOR EACH ROW EXECUTE FUNCTION receipt_append_only();

CREATE FUNCTION receiptcounter_forward_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' OR NEW.last_number < OLD.last_number THEN
        RAISE EXCEPTION 'the receipt counter only moves forward: % is refused', TG_OP
            USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER receiptcounter_forward_only BEFORE UPDATE OR DELETE ON payments_receiptcounter
    FOR EACH ROW EXECUTE FUNCTION receiptcounter_forward_only();
"""

POSTGRES_DOWN = """
DROP TRIGGER IF EXISTS receiptcounter_forward_only ON payments_receiptcounter;
DROP FUNCTION IF EXISTS receiptcounter_forward_only();
DROP TRIGGER IF EXISTS receipt_append_only ON payments_receipt;
DROP FUNCTION IF EXISTS receipt_append_only();
"""

SQLITE_UP = [
    *(
        f"""CREATE TRIGGER payments_receipt_append_only_{op.lower()} BEFORE {op}
            ON payments_receipt
            BEGIN SELECT RAISE(ABORT, 'receipts are never changed'); END;"""
        for op in ("UPDATE", "DELETE")
    ),
    """CREATE TRIGGER payments_receiptcounter_forward_only_update BEFORE UPDATE
        ON payments_receiptcounter WHEN NEW.last_number < OLD.last_number
        BEGIN SELECT RAISE(ABORT, 'the receipt counter only moves forward'); END;""",
    """CREATE TRIGGER payments_receiptcounter_forward_only_delete BEFORE DELETE
        ON payments_receiptcounter
        BEGIN SELECT RAISE(ABORT, 'the receipt counter only moves forward'); END;""",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS payments_receipt_append_only_update;",
    "DROP TRIGGER IF EXISTS payments_receipt_append_only_delete;",
    "DROP TRIGGER IF EXISTS payments_receiptcounter_forward_only_update;",
    "DROP TRIGGER IF EXISTS payments_receiptcounter_forward_only_delete;",
]


def forwards(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_UP, params=None)
    elif connection.vendor == "sqlite":
        for statement in SQLITE_UP:
            schema_editor.execute(statement)


def backwards(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_DOWN, params=None)
    elif connection.vendor == "sqlite":
        for statement in SQLITE_DOWN:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("payments", "0008_withdrawals_receipts_extensions")]

    operations = [migrations.RunPython(forwards, backwards)]
