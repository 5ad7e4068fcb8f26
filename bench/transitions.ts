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
 *    transitions per run), each call one plain JSON-RPC POST on a keep-alive socket (bench/client.ts).
 *
 * Prints both rates and their ratio. Usage: `pnpm bench [--clients 16] [--seconds 20]`.
 * Only loopback addresses are used; every loop is bounded in time.
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { POSTGRES_URL, REPO, startDistributed } from "../test/support/deploy.ts";
import { BenchClient, keepAliveAgent, Latencies } from "./client.ts";

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "16" },
    seconds: { type: "string", default: "20" },
    engines: { type: "string", default: "1" },
    source: { type: "boolean", default: false },
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

/** CPU time (user + system) of a process so far, in ms, from `/proc/<pid>/stat` (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at ") ": utime is 14th, stime 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * (1000 / TICKS_PER_S);
}
const TICKS_PER_S = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** Commits and rollbacks of one database so far (`pg_stat_database`, flushed within about 1 s). */
async function commits(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(
      "select xact_commit::bigint as n from pg_stat_database where datname = current_database()",
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await c.end();
  }
}

/** The compiled build the image runs (`pnpm build`), in a temporary folder: the bench measures what production runs. */
function compiledCli(): { cli: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "baton-bench-build-"));
  execFileSync(
    process.execPath,
    ["--import", "tsx", join(REPO, "scripts/build.ts"), "--out", dir, "--install", "--offline"],
    {
      cwd: REPO,
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  return { cli: join(dir, "services/cli/src/main.js"), dir };
}

interface BatonRun {
  transitions: number;
  errors: number;
  /** CPU ms per acknowledged transition, per service (replicas summed), and of this load generator. */
  cpuPerTransition: Record<string, number>;
  /** PostgreSQL commits (`xact_commit` delta of the deployment's database) per transition. */
  commitsPerTransition: number;
}

async function baton(): Promise<BatonRun> {
  // Rate limits off (0): the benchmark is one organization writing as fast as the machine allows,
  // which is exactly what the limits exist to slow (issue #12).
  const build = values.source ? null : compiledCli();
  const deployment = await startDistributed({
    engines: Number(values.engines),
    ...(build ? { compiledCli: build.cli } : {}),
    env: {
      BATON_RATE_PRINCIPAL_WRITES: "0",
      BATON_RATE_PRINCIPAL_READS: "0",
      BATON_RATE_ORG_WRITES: "0",
      BATON_RATE_ORG_READS: "0",
    },
  });
  try {
    await deployment.publish(join(REPO, "bench/processes/bench-step"));
    // A lean client (one JSON-RPC POST per call, as any MCP client over stateless Streamable HTTP
    // sends it) so the load generator leaves the machine's two cores to the server.
    const agent = keepAliveAgent();
    const latencies = new Latencies();
    const sessions: BenchClient[] = [];
    for (let i = 0; i < clients; i++) {
      const token = await deployment.token({ kind: "agent", id: `a_bench_${i}` });
      sessions.push(new BenchClient(deployment.url, token, agent, latencies));
    }
    let transitions = 0;
    let errors = 0;
    const processes: [string, ChildProcess][] = [
      "gateway",
      "engine",
      "registry",
      "scheduler",
      "evidence",
    ].flatMap((name) => deployment.running(name).map((c) => [name, c] as [string, ChildProcess]));
    await new Promise((r) => setTimeout(r, 1500));
    const commitsBefore = await commits(deployment.databaseUrl);
    const cpuBefore = processes.map(([, c]) => cpuMs(c.pid as number));
    const selfBefore = process.cpuUsage();
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
    const cpuAfter = processes.map(([, c]) => cpuMs(c.pid as number));
    agent.destroy();
    const self = process.cpuUsage(selfBefore);
    // pg_stat_database is flushed by each backend at most once a second.
    await new Promise((r) => setTimeout(r, 1500));
    const commitsAfter = await commits(deployment.databaseUrl);
    const cpuPerTransition: Record<string, number> = {};
    processes.forEach(([name], i) => {
      cpuPerTransition[name] =
        (cpuPerTransition[name] ?? 0) + ((cpuAfter[i] as number) - (cpuBefore[i] as number)) / transitions;
    });
    cpuPerTransition["load generator"] = (self.user + self.system) / 1000 / transitions;
    return {
      transitions: transitions / seconds,
      errors,
      cpuPerTransition,
      // Minus the one commit of reading the count itself.
      commitsPerTransition: (commitsAfter - commitsBefore - 1) / transitions,
    };
  } finally {
    await deployment.stop();
    if (build) rmSync(build.dir, { recursive: true, force: true });
  }
}

const pgTps = await baseline();
const b = await baton();
process.stdout.write(
  `clients ${clients}, ${seconds} s each\n` +
    `PostgreSQL baseline (pgbench, one transition-shaped commit): ${pgTps.toFixed(0)} commits/s\n` +
    `Baton (MCP over HTTP, gateway → NATS → engine → PostgreSQL): ${b.transitions.toFixed(0)} transitions/s (${b.errors} errors)\n` +
    `ratio Baton / PostgreSQL: ${(b.transitions / pgTps).toFixed(3)}\n` +
    `PostgreSQL commits per transition: ${b.commitsPerTransition.toFixed(2)}\n` +
    `CPU ms per transition: ${Object.entries(b.cpuPerTransition)
      .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
      .join(", ")}\n`,
);
