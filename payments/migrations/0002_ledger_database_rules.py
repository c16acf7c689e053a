"""The database, not only Python, keeps the ledger's rules.

PostgreSQL: a deferred constraint trigger checks at commit that every transaction has at least
two entries summing to zero; updates and deletes of transactions and entries are refused.
SQLite (the embedded default) has no deferred triggers: it gets the append-only rule, and the
balance rule is kept by payments.services.ledger.ledger_post.
"""

from django.db import migrations

POSTGRES_UP = """
CREATE FUNCTION ledger_check_transaction_balanced() RETURNS trigger AS $$
DECLARE
    txn_id bigint;
    total numeric;
    entry_count integer;
BEGIN
    IF TG_TABLE_NAME = 'payments_ledgerentry' THEN
        txn_id := NEW.transaction_id;
    ELSE
        txn_id := NEW.id;
    END IF;
    SELECT COALESCE(SUM(amount), 0), COUNT(*) INTO total, entry_count
      FROM payments_ledgerentry WHERE transaction_id = txn_id;
    IF entry_count < 2 THEN
        RAISE EXCEPTION 'ledger transaction % has % entries; at least two are required',
            txn_id, entry_count USING ERRCODE = '23514';
    END IF;
    IF total <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % is unbalanced: its entries sum to %', txn_id, total
            USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER ledgerentry_balanced
    AFTER INSERT ON payments_ledgerentry
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_check_transaction_balanced();

CREATE CONSTRAINT TRIGGER ledgertransaction_balanced
    AFTER INSERT ON payments_ledgertransaction
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_check_transaction_balanced();

CREATE FUNCTION ledger_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only: % on % is refused; post a reversal instead',
        TG_OP, TG_TABLE_NAME USING ERRCODE = '23514';
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER ledgerentry_append_only BEFORE UPDATE OR DELETE ON payments_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledgertransaction_append_only BEFORE UPDATE OR DELETE ON payments_ledgertransaction
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
"""

POSTGRES_DOWN = """
DROP TRIGGER IF EXISTS ledgertransaction_append_only ON payments_ledgertransaction;
DROP TRIGGER IF EXISTS ledgerentry_append_only ON payments_ledgerentry;
DROP FUNCTION IF EXISTS ledger_append_only();
DROP TRIGGER IF EXISTS ledgertransaction_balanced ON payments_ledgertransaction;
DROP TRIGGER IF EXISTS ledgerentry_balanced ON payments_ledgerentry;
DROP FUNCTION IF EXISTS ledger_check_transaction_balanced();
"""

SQLITE_UP = [
    f"""CREATE TRIGGER {table}_append_only_{op.lower()} BEFORE {op} ON {table}
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only; post a reversal instead'); END;"""
    for table in ("payments_ledgerentry", "payments_ledgertransaction")
    for op in ("UPDATE", "DELETE")
]
SQLITE_DOWN = [
    f"DROP TRIGGER IF EXISTS {table}_append_only_{op.lower()};"
    for table in ("payments_ledgerentry", "payments_ledgertransaction")
    for op in ("UPDATE", "DELETE")
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
    dependencies = [("payments", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
