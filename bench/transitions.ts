/**
 * Transition throughput against PostgreSQL's own commit limit on the same machine (the bar: "we
 * measure ourselves against PostgreSQL's own limit").
 *
 * 1. Baseline: pgbench runs, at the same concurrency and for the same time, a transaction shaped like
 *    one Baton transition's commit (update a run row fenced by rev, append a journal row, insert an
 *    idempotency row) against a fresh database on the machine's PostgreSQL.
 * 2. Baton: the services as separate processes (`baton serve`, NATS + PostgreSQL, file bytes in a
 *    bucket of an s3rver the deployment starts, as in production on S3; the loop uploads nothing);
 *    C virtual agents loop start_run → claim → submit over MCP Streamable HTTP (3 acknowledged
 *    transitions per run).
 *
 * Prints both rates and their ratio. Usage: `pnpm bench [--clients 16] [--seconds 20]`.
 * Only loopback addresses are used; every loop is bounded in time.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { POSTGRES_URL, REPO, startDistributed } from "../test/support/deploy.ts";

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "16" },
    seconds: { type: "string", default: "20" },
    engines: { type: "string", default: "1" },
  },
});
const clients = Number(values.clients);
const seconds = Number(values.seconds);

async function baseline(): Promise<number> {
  const db = `baton_bench_pg_${process.pid}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${db}`);
  const url = POSTGRES_URL.replace(/\/[^/]*$/, `/${db}`);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`create table runs (id bigint primary key, rev int not null, doc jsonb not null);
    create table journal (run_id bigint, rev int, at timestamptz, detail jsonb, primary key (run_id, rev));
    create table idem (id text primary key, result jsonb);
    insert into runs select g, 0, '{"state":"active","data":{"inputs":{"n":1},"steps":{}}}' from generate_series(1, 100000) g;`);
  await c.end();
  const dir = mkdtempSync(join(tmpdir(), "baton-bench-"));
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
      "127.0.0.1",
      "-U",
      "postgres",
      db,
    ],
    {
      encoding: "utf8",
    },
  );
  rmSync(dir, { recursive: true, force: true });
  await admin.query(`drop database ${db} with (force)`);
  await admin.end();
  const m = /tps = ([0-9.]+)/.exec(out);
  if (!m) throw new Error(`pgbench printed no tps:\n${out}`);
  return Number(m[1]);
}

// biome-ignore lint/suspicious/noExplicitAny: the bench reads result shapes dynamically
type Result = { ok: true; data: any } | { ok: false; error: { code: string } };

let rpcId = 0;
async function rpc(url: string, token: string, tool: string, args: object): Promise<Result> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: ++rpcId,
      method: "tools/call",
      params: { name: tool, arguments: args },
    }),
  });
  const body = (await response.json()) as { result?: { structuredContent: Result } };
  if (!body.result) return { ok: false, error: { code: `http ${response.status}` } };
  return body.result.structuredContent;
}

async function baton(): Promise<{ transitions: number; errors: number }> {
  const deployment = await startDistributed({ engines: Number(values.engines) });
  try {
    await deployment.publish(join(REPO, "bench/processes/bench-step"));
    // A lean client (one JSON-RPC POST per call, as any MCP client over stateless Streamable HTTP
    // sends it) so the load generator leaves the machine's two cores to the server.
    const sessions: { call: (tool: string, args: object) => Promise<Result> }[] = [];
    for (let i = 0; i < clients; i++) {
      const token = await deployment.token({ kind: "agent", id: `a_bench_${i}` });
      sessions.push({ call: (tool, args) => rpc(deployment.url, token, tool, args) });
    }
    let transitions = 0;
    let errors = 0;
    const end = Date.now() + seconds * 1000;
    await Promise.all(
      sessions.map(async (s, i) => {
        let n = 0;
        while (Date.now() < end) {
          n++;
          const started = await s.call("start_run", {
            process: "bench-step",
            inputs: { n },
            requestId: randomUUID(),
          });
          if (!started.ok) {
            errors++;
            continue;
          }
          transitions++;
          const runId = started.data.run.id;
          const claim = await s.call("claim", { runId, stepId: "work", requestId: randomUUID() });
          if (!claim.ok) {
            errors++;
            continue;
          }
          transitions++;
          const submit = await s.call("submit", {
            token: claim.data.token,
            output: { n },
            summary: `bench ${i}/${n}`,
            requestId: randomUUID(),
          });
          if (submit.ok) transitions++;
          else errors++;
        }
      }),
    );
    return { transitions: transitions / seconds, errors };
  } finally {
    await deployment.stop();
  }
}

const pgTps = await baseline();
const b = await baton();
process.stdout.write(
  `clients ${clients}, ${seconds} s each\n` +
    `PostgreSQL baseline (pgbench, one transition-shaped commit): ${pgTps.toFixed(0)} commits/s\n` +
    `Baton (MCP over HTTP, gateway → NATS → engine → PostgreSQL): ${b.transitions.toFixed(0)} transitions/s (${b.errors} errors)\n` +
    `ratio Baton / PostgreSQL: ${(b.transitions / pgTps).toFixed(3)}\n`,
);
