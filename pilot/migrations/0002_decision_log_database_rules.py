"""The database, not only Python, keeps the decision log's rules.

PostgreSQL: updates and deletes of pilot decisions are refused, and a new decision may only
rest on a report of its own order. SQLite (the embedded default) gets the same two rules as
plain triggers.
"""

from django.db import migrations

POSTGRES_UP = """
CREATE FUNCTION pilot_decision_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the pilot decision log is append-only: % is refused; record a new decision',
        TG_OP USING ERRCODE = '23514';
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER pilotdecision_append_only BEFORE UPDATE OR DELETE ON pilot_pilotdecision
    FOR EACH ROW EXECUTE FUNCTION pilot_decision_append_only();

CREATE FUNCTION pilot_decision_report_of_its_order() RETURNS trigger AS $$
BEGIN
    IF NEW.report_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM pilot_diagnosticsreport
         WHERE id = NEW.report_id AND order_id = NEW.order_id
    ) THEN
        RAISE EXCEPTION 'pilot decision of order % rests on report %, which is not of that order',
            NEW.order_id, NEW.report_id USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER pilotdecision_report_of_its_order BEFORE INSERT ON pilot_pilotdecision
    FOR EACH ROW EXECUTE FUNCTION pilot_decision_report_of_its_order();
"""

POSTGRES_DOWN = """
DROP TRIGGER IF EXISTS pilotdecision_report_of_its_order ON pilot_pilotdecision;
DROP FUNCTION IF EXISTS pilot_decision_report_of_its_order();
DROP TRIGGER IF EXISTS pilotdecision_append_only ON pilot_pilotdecision;
DROP FUNCTION IF EXISTS pilot_decision_append_only();
"""

SQLITE_UP = [
    *(
        f"""CREATE TRIGGER pilotdecision_append_only_{op.lower()} BEFORE {op}
            ON pilot_pilotdecision
            BEGIN SELECT RAISE(ABORT, 'the pilot decision log is append-only'); END;"""
        for op in ("UPDATE", "DELETE")
    ),
    """CREATE TRIGGER pilotdecision_report_of_its_order BEFORE INSERT ON pilot_pilotdecision
        WHEN NEW.report_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM pilot_diagnosticsreport
             WHERE id = NEW.report_id AND order_id = NEW.order_id)
        BEGIN SELECT RAISE(ABORT, 'a pilot decision rests on a report of its own order'); END;""",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS pilotdecision_append_only_update;",
    "DROP TRIGGER IF EXISTS pilotdecision_append_only_delete;",
    "DROP TRIGGER IF EXISTS pilotdecision_report_of_its_order;",
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
    dependencies = [("pilot", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
