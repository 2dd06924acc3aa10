-- A transaction script's required row (lib/db/transaction-script.ts, `required`) is judged by PostgreSQL itself, so
-- the transaction can commit in the round trip that carries it: refuse_unless raises when the row is missing, naming
-- the statement's index in its round trip, and the transaction rolls back. (Not "found": PL/pgSQL's FOUND.)
CREATE FUNCTION "refuse_unless"("present" BOOLEAN, "statement" INTEGER) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF NOT "present" THEN
    RAISE EXCEPTION 'a row the transaction requires is missing' USING ERRCODE = 'AWR01', DETAIL = "statement"::TEXT;
  END IF;
  RETURN TRUE;
END
$$;
