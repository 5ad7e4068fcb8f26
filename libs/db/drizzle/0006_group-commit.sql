-- baton_commit(p) as in 0002, and one more check first (issue #15: one commit per transition, no
-- read before it): when p has 'latest' {org, name, version}, a start_run without a version was
-- computed on the engine's cached latest version of that process; if a later version has been
-- published since, nothing is written and it returns 'stale_version', so the engine reloads the
-- latest version and computes the run again. Returns 'ok', 'idempotency_conflict' or 'stale_version'.
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
--> statement-breakpoint
-- Group commit (issue #15): the transitions an engine has queued while its previous commit was in
-- flight, committed in one statement, so one PostgreSQL commit and one round trip. ps is a JSON
-- array of baton_commit's arguments; each is applied in a subtransaction of its own, so a lost
-- fence (BT409) undoes only that transition's writes and is reported as 'fence'. Returns a JSON
-- array of outcomes in the same order: 'ok', 'idempotency_conflict', 'stale_version' or 'fence'.
CREATE OR REPLACE FUNCTION baton_commit_many(ps jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  p jsonb;
  r text;
  outcomes jsonb := '[]'::jsonb;
BEGIN
  FOR p IN SELECT value FROM jsonb_array_elements(ps) LOOP
    BEGIN
      r := baton_commit(p);
    EXCEPTION WHEN SQLSTATE 'BT409' THEN
      r := 'fence';
    END;
    outcomes := outcomes || to_jsonb(r);
  END LOOP;
  RETURN outcomes;
END
$$;
