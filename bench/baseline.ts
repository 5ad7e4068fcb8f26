/**
 * The bench's yardstick (issue #15): pgbench runs, at the same concurrency and for the same time, a
 * transaction shaped like one Baton transition's commit (update a run row fenced by rev, append a
 * journal row, insert an idempotency row) against a fresh database on the machine's PostgreSQL.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { POSTGRES_URL } from "../test/support/deploy.ts";

/** pgbench's commits per second with `clients` connections for `seconds`; throws when it prints no rate. */
export async function pgbenchRate(clients: number, seconds: number): Promise<number> {
  const db = `baton_bench_pg_${process.pid}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${db}`);
  const dir = mkdtempSync(join(tmpdir(), "baton-bench-"));
  try {
    const url = POSTGRES_URL.replace(/\/[^/]*$/, `/${db}`);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`create table runs (id bigint primary key, rev int not null, doc jsonb not null);
    create table journal (run_id bigint, rev int, at timestamptz, detail jsonb, primary key (run_id, rev));
    create table idem (id text primary key, result jsonb);
    insert into runs select g, 0, '{"state":"active","data":{"inputs":{"n":1},"steps":{}}}' from generate_series(1, 100000) g;`);
    await c.end();
    const script = join(dir, "transition.sql");
    writeFileSync(
      script,
      `\\set id random(1, 100000)
BEGIN;
INSERT INTO idem VALUES (md5(random()::text || clock_timestamp()::text), '{"ok":true,"data":{"run":{"state":"active"}}}');
UPDATE runs SET rev = rev + 1, doc = jsonb_set(doc, '{state}', '"waiting"') WHERE id = :id;
INSERT INTO journal SELECT :id, rev, now(), '{"command":"submit"}' FROM runs WHERE id = :id;
COMMIT;
`,
    );
    const u = new URL(POSTGRES_URL);
    const out = execFileSync(
      "pgbench",
      [
        "-n",
        "-c",
        String(clients),
        "-j",
        "2",
        "-T",
        String(seconds),
        "-f",
        script,
        "-h",
        u.hostname,
        "-p",
        u.port || "5432",
        "-U",
        decodeURIComponent(u.username) || "postgres",
        db,
      ],
      { encoding: "utf8" },
    );
    const m = /tps = ([0-9.]+)/.exec(out);
    if (!m) throw new Error(`pgbench printed no tps:\n${out}`);
    return Number(m[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await admin.query(`drop database ${db} with (force)`);
    await admin.end();
  }
}
