-- One transition, one statement, one commit (ARCHITECTURE rule 2).
--
-- baton_commit(p) writes everything a run transition changes, atomically, in one round trip:
-- the idempotency record (first, so a taken requestId writes nothing), the run row fenced by its
-- rev (a lost fence raises BT409 and rolls back the idempotency record too), the journal entry,
-- the derived index rows (ready_steps, work_items) and timers as deletes and upserts, and the
-- outbox rows. p's keys are the tables' column names. Returns 'ok' or 'idempotency_conflict'.
CREATE OR REPLACE FUNCTION baton_commit(p jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v_run jsonb := p->'run';
  v_id text := p->'run'->>'id';
BEGIN
  IF jsonb_typeof(p->'idempotency') = 'object' THEN
    INSERT INTO idempotency
      SELECT * FROM jsonb_populate_record(NULL::idempotency, p->'idempotency')
      ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      RETURN 'idempotency_conflict';
    END IF;
  END IF;

  IF jsonb_typeof(p->'beforeRev') = 'number' THEN
    UPDATE runs SET
      state = v_run->>'state',
      outcome = v_run->>'outcome',
      updated_at = (v_run->>'updated_at')::timestamptz,
      snapshot = v_run->>'snapshot',
      rev = (v_run->>'rev')::integer,
      doc = v_run->'doc'
    WHERE id = v_id AND rev = (p->>'beforeRev')::integer;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'baton: run % changed since it was read', v_id USING ERRCODE = 'BT409';
    END IF;
  ELSE
    INSERT INTO runs SELECT * FROM jsonb_populate_record(NULL::runs, v_run) ON CONFLICT (id) DO NOTHING;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'baton: run % already exists', v_id USING ERRCODE = 'BT409';
    END IF;
  END IF;

  INSERT INTO run_journal SELECT * FROM jsonb_populate_record(NULL::run_journal, p->'journal');

  DELETE FROM ready_steps
    WHERE run_id = v_id AND step_id IN (SELECT jsonb_array_elements_text(p->'readyDelete'));
  INSERT INTO ready_steps
    SELECT * FROM jsonb_populate_recordset(NULL::ready_steps, p->'readyUpsert')
    ON CONFLICT (run_id, step_id) DO UPDATE SET
      org = excluded.org, process = excluded.process, version = excluded.version, mode = excluded.mode,
      ready_since = excluded.ready_since, due_at = excluded.due_at,
      lease_expires_at = excluded.lease_expires_at, progress = excluded.progress, handoff = excluded.handoff;

  DELETE FROM work_items
    WHERE run_id = v_id AND work_item_id IN (SELECT jsonb_array_elements_text(p->'itemsDelete'));
  INSERT INTO work_items
    SELECT * FROM jsonb_populate_recordset(NULL::work_items, p->'itemsUpsert')
    ON CONFLICT (run_id, work_item_id) DO UPDATE SET
      org = excluded.org, process = excluded.process, version = excluded.version, mode = excluded.mode,
      group_id = excluded.group_id, person = excluded.person, created_at = excluded.created_at,
      item = excluded.item;

  DELETE FROM timers t
    USING jsonb_to_recordset(p->'timersDelete') AS d(kind text, step_id text)
    WHERE t.run_id = v_id AND t.kind = d.kind AND t.step_id = d.step_id;
  INSERT INTO timers (run_id, kind, step_id, org, partition, fire_at)
    SELECT run_id, kind, step_id, org, partition, fire_at
    FROM jsonb_populate_recordset(NULL::timers, p->'timersUpsert')
    ON CONFLICT (run_id, kind, step_id) DO UPDATE SET fire_at = excluded.fire_at;

  INSERT INTO outbox (org, subject, payload, created_at)
    SELECT org, subject, payload, created_at FROM jsonb_populate_recordset(NULL::outbox, p->'outbox');

  RETURN 'ok';
END
$$;
