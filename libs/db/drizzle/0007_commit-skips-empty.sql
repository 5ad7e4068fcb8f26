-- baton_commit(p) as in 0006, with each derived-row statement run only when p has rows for it
-- (issue #15). Most transitions touch one or two of the seven row sets (a claim moves no timer and
-- no work item), yet every statement was planned and executed, an index probe each, for an empty
-- array. Skipping them took PostgreSQL's time per transition from 0.29 to 0.25 ms (backend CPU,
-- replaying 2,916 transitions recorded from `pnpm bench`, five runs each), and the time `pnpm bench`
-- reads inside the function from 0.330 and 0.325 to 0.286 and 0.265 ms (runs alternated). Same
-- writes, same outcomes: jsonb_array_length of a missing key is NULL (skipped, as before: nothing
-- to delete or insert), and of a scalar raises as jsonb_array_elements did.
CREATE OR REPLACE FUNCTION baton_commit(p jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v_run jsonb := p->'run';
  v_id text := p->'run'->>'id';
BEGIN
  -- A start_run without a version ran on the engine's cached latest version: it stands only if
  -- that is still the latest, checked in the same statement as the write (so no separate read).
  IF jsonb_typeof(p->'latest') = 'object' AND EXISTS (
    SELECT 1 FROM process_versions
    WHERE org = p->'latest'->>'org' AND name = p->'latest'->>'name'
      AND version > (p->'latest'->>'version')::integer
  ) THEN
    RETURN 'stale_version';
  END IF;

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

  IF jsonb_array_length(p->'readyDelete') > 0 THEN
    DELETE FROM ready_steps
      WHERE run_id = v_id AND step_id IN (SELECT jsonb_array_elements_text(p->'readyDelete'));
  END IF;
  IF jsonb_array_length(p->'readyUpsert') > 0 THEN
    INSERT INTO ready_steps
      SELECT * FROM jsonb_populate_recordset(NULL::ready_steps, p->'readyUpsert')
      ON CONFLICT (run_id, step_id) DO UPDATE SET
        org = excluded.org, process = excluded.process, version = excluded.version, mode = excluded.mode,
        ready_since = excluded.ready_since, due_at = excluded.due_at,
        lease_expires_at = excluded.lease_expires_at, progress = excluded.progress, handoff = excluded.handoff;
  END IF;

  IF jsonb_array_length(p->'itemsDelete') > 0 THEN
    DELETE FROM work_items
      WHERE run_id = v_id AND work_item_id IN (SELECT jsonb_array_elements_text(p->'itemsDelete'));
  END IF;
  IF jsonb_array_length(p->'itemsUpsert') > 0 THEN
    INSERT INTO work_items
      SELECT * FROM jsonb_populate_recordset(NULL::work_items, p->'itemsUpsert')
      ON CONFLICT (run_id, work_item_id) DO UPDATE SET
        org = excluded.org, process = excluded.process, version = excluded.version, mode = excluded.mode,
        group_id = excluded.group_id, person = excluded.person, created_at = excluded.created_at,
        item = excluded.item;
  END IF;

  IF jsonb_array_length(p->'timersDelete') > 0 THEN
    DELETE FROM timers t
      USING jsonb_to_recordset(p->'timersDelete') AS d(kind text, step_id text)
      WHERE t.run_id = v_id AND t.kind = d.kind AND t.step_id = d.step_id;
  END IF;
  IF jsonb_array_length(p->'timersUpsert') > 0 THEN
    INSERT INTO timers (run_id, kind, step_id, org, partition, fire_at)
      SELECT run_id, kind, step_id, org, partition, fire_at
      FROM jsonb_populate_recordset(NULL::timers, p->'timersUpsert')
      ON CONFLICT (run_id, kind, step_id) DO UPDATE SET fire_at = excluded.fire_at;
  END IF;

  IF jsonb_array_length(p->'outbox') > 0 THEN
    INSERT INTO outbox (org, subject, payload, created_at)
      SELECT org, subject, payload, created_at FROM jsonb_populate_recordset(NULL::outbox, p->'outbox');
  END IF;

  RETURN 'ok';
END
$$;
