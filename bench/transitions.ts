/**
 * Transition throughput against PostgreSQL's own commit limit on the same machine (issue #15: "we
 * measure ourselves against PostgreSQL's own limit"), and where the time goes.
 *
 * 1. Baseline: pgbench runs a transaction shaped like one transition's commit at the same
 *    concurrency and for the same time (bench/baseline.ts), before the first configuration and again
 *    after each one measured in the closed loop; a configuration's ratio is taken against the mean of
 *    the runs just before and just after it, so both sides of the quotient see the machine as it was
 *    while Baton ran (this VM's speed drifts by a third within minutes, and slows after sustained
 *    load), and a drift of more than a fifth between the two is reported.
 * 2. Per configuration (a deployment and its engine replicas):
 *    - closed loop (`--mode closed`, the default): C virtual agents loop start_run → claim → submit
 *      (bench/loops.ts) and the rate, its ratio to pgbench's, PostgreSQL commits per transition
 *      (engine write commits, outbox relay rounds and the rest), CPU ms per transition per process
 *      (Baton's services — the notifier included, as production runs it — PostgreSQL's backends of
 *      the deployment's database, nats-server, and the load generator itself) and per-tool
 *      latencies are printed;
 *    - arrival rate (`--mode arrival`): runs start at `--rate` per second; agents poll `get_work`
 *      (`--poll-ms`), claim and submit; people of the approver group poll and approve. Per-tool
 *      p50/p95/p99 latencies, the time from an agent step becoming ready to its claim, and errors.
 * 3. One markdown table of every configuration, with the rate modeled at 2, 4 and 8 cores.
 *
 * Deployments: `distributed` (each service a `baton serve` process of the compiled build, `pnpm
 * build`, over NATS and PostgreSQL, as the image runs them; `--source` runs the sources under tsx)
 * and `embedded` (`pnpm baton dev`: one process, PGlite). `--matrix`: embedded, and distributed with
 * 1, 2 and 4 engine replicas.
 *
 * Usage: `pnpm bench [--mode closed|arrival|both] [--deployment distributed|embedded|both]
 * [--engines 1] [--matrix] [--clients 16] [--seconds 20] [--rate 20] [--poll-ms 100] [--people 2]
 * [--agents C] [--warmup 0] [--stats-wait 11] [--source]`; `--agents N` is how many agents poll in
 * the arrival mode (default: `--clients`); `--warmup S` runs the closed loop S seconds unmeasured
 * first (JIT, pools); `--stats-wait S` is how long to wait, before and after the closed loop, for
 * PostgreSQL's statistics to hold every commit (an idle backend reports up to 10 s late): 0 skips the
 * wait, and the commit split may then miss commits (the smoke test uses it). Only loopback
 * addresses are used; every loop is bounded in time.
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  type Deployment,
  NATS_URL,
  POSTGRES_URL,
  REPO,
  startDistributed,
  startEmbedded,
} from "../test/support/deploy.ts";
import { until } from "../test/support/processes.ts";
import { pgbenchRate } from "./baseline.ts";
import { BenchClient, keepAliveAgent, Latencies } from "./client.ts";
import { APPROVER_GROUP, arrivalLoop, closedLoop } from "./loops.ts";
import {
  type Charged,
  CpuMeter,
  databaseCounters,
  engineCounters,
  natsServerPid,
  postgresBackends,
} from "./measure.ts";
import {
  type CommitSplit,
  errorText,
  latencyLines,
  MODEL_NOTE,
  quantiles,
  type Row,
  table,
} from "./report.ts";

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "16" },
    seconds: { type: "string", default: "20" },
    engines: { type: "string", default: "1" },
    mode: { type: "string", default: "closed" },
    deployment: { type: "string", default: "distributed" },
    matrix: { type: "boolean", default: false },
    rate: { type: "string", default: "20" },
    "poll-ms": { type: "string", default: "100" },
    people: { type: "string", default: "2" },
    agents: { type: "string" },
    "stats-wait": { type: "string", default: "11" },
    warmup: { type: "string", default: "0" },
    source: { type: "boolean", default: false },
  },
});
const clients = Number(values.clients);
const seconds = Number(values.seconds);
/** How long to wait for PostgreSQL's statistics around the closed loop, ms (`--stats-wait` is in seconds). */
const statsWaitMs = Number(values["stats-wait"]) * 1000;
const mode = values.mode as string;
if (!["closed", "arrival", "both"].includes(mode)) throw new Error("--mode takes closed, arrival or both");
const runClosed = mode !== "arrival";
const runArrival = mode !== "closed";
const deploymentFlag = values.deployment as string;
if (!["distributed", "embedded", "both"].includes(deploymentFlag))
  throw new Error("--deployment takes distributed, embedded or both");

/** One configuration to measure. */
interface Config {
  deployment: "embedded" | "distributed";
  engines: number;
}
const configs: Config[] = values.matrix
  ? [
      { deployment: "embedded", engines: 1 },
      { deployment: "distributed", engines: 1 },
      { deployment: "distributed", engines: 2 },
      { deployment: "distributed", engines: 4 },
    ]
  : (["embedded", "distributed"] as const)
      .filter((d) => deploymentFlag === "both" || deploymentFlag === d)
      .map((d) => ({ deployment: d, engines: d === "embedded" ? 1 : Number(values.engines) }));

// Rate limits off (0): the benchmark is one organization writing as fast as the machine allows,
// which is exactly what the limits exist to slow (issue #12).
const UNLIMITED = {
  BATON_RATE_PRINCIPAL_WRITES: "0",
  BATON_RATE_PRINCIPAL_READS: "0",
  BATON_RATE_ORG_WRITES: "0",
  BATON_RATE_ORG_READS: "0",
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const out = (text: string) => process.stdout.write(`${text}\n`);

/** A started configuration: its deployment and what the bench reads of it. */
interface Target {
  config: Config;
  deployment: Deployment;
  /** The processes CPU is charged to, by name (read at the start and the end of a phase). */
  charged(): Promise<Charged[]>;
  /** The engine replicas' `/metrics` URLs. */
  metricsUrls(): string[];
  /** The deployment's PostgreSQL database, or null (PGlite). */
  databaseUrl: string | null;
}

/** The compiled build the image runs (`pnpm build`), in a temporary folder: the bench measures what production runs. */
function compiledCli(): { cli: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "baton-bench-build-"));
  execFileSync(
    process.execPath,
    ["--import", "tsx", join(REPO, "scripts/build.ts"), "--out", dir, "--install", "--offline"],
    { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] },
  );
  return { cli: join(dir, "services/cli/src/main.js"), dir };
}

async function start(config: Config, cli: string | null): Promise<Target> {
  if (config.deployment === "embedded") {
    const deployment = await startEmbedded({ env: UNLIMITED });
    const pid = deployment.process.pid as number;
    return {
      config,
      deployment,
      charged: async () => [{ name: "baton dev", pid }],
      metricsUrls: () => [deployment.url.replace(/\/mcp$/, "/metrics")],
      databaseUrl: null,
    };
  }
  const deployment = await startDistributed({
    engines: config.engines,
    ...(cli ? { compiledCli: cli } : { sources: true }),
    env: UNLIMITED,
    // pg_stat_user_functions counts the engine's commit functions only with this.
    databaseSettings: { track_functions: "pl" },
  });
  // Production runs the notifier too (compose, the Helm chart): with its defaults — no SMTP, so no
  // mail, and no webhook subscription — it still reads every domain event, and records none (nobody hears of them).
  const notifier = deployment.serve("notifier");
  await until(
    async () => (await fetch(`${deployment.opsUrl(notifier)}/readyz`).catch(() => null))?.status === 200,
    "the notifier ready",
    60_000,
  );
  const database = new URL(deployment.databaseUrl).pathname.slice(1);
  const nats = natsServerPid(Number(new URL(NATS_URL).port || 4222));
  const services = ["gateway", "engine", "registry", "scheduler", "evidence", "notifier"];
  return {
    config,
    deployment,
    charged: async () => [
      ...services.flatMap((name) => deployment.running(name).map((c) => ({ name, pid: c.pid as number }))),
      ...(await postgresBackends(POSTGRES_URL, database)).map((pid) => ({ name: "postgres", pid })),
      ...(nats ? [{ name: "nats-server", pid: nats }] : []),
    ],
    metricsUrls: () => deployment.running("engine").map((c) => `${deployment.opsUrl(c)}/metrics`),
    databaseUrl: deployment.databaseUrl,
  };
}

/** Clients of one identity each, sharing one keep-alive agent and one latency record. */
async function clientsOf(
  t: Target,
  ids: { kind: "agent" | "person"; id: string; groups?: string[] }[],
  latencies: Latencies,
  agent: ReturnType<typeof keepAliveAgent>,
): Promise<BenchClient[]> {
  const list: BenchClient[] = [];
  for (const as of ids) {
    const token = await t.deployment.token(
      as.kind === "agent" ? { kind: "agent", id: as.id } : { ...as, kind: "person" },
    );
    list.push(new BenchClient(t.deployment.url, token, agent, latencies));
  }
  return list;
}

interface ClosedResult {
  rate: number;
  latencies: Latencies;
  commits: CommitSplit;
  cpu: Map<string, number>;
  generatorCpu: number;
}

async function closed(t: Target): Promise<ClosedResult> {
  const agent = keepAliveAgent();
  const latencies = new Latencies();
  const ids = Array.from({ length: clients }, (_, i) => ({ kind: "agent" as const, id: `a_bench_${i}` }));
  const list = await clientsOf(t, ids, latencies, agent);
  const warmup = Number(values.warmup);
  if (warmup > 0) {
    // Unmeasured: first calls pay for JIT compilation, pools opening and caches filling.
    const cold = new Latencies();
    await closedLoop(await clientsOf(t, ids, cold, agent), warmup);
  }
  // The start-up's and the warm-up's commits must be in PostgreSQL's statistics before they are
  // read, or they count as the run's (see the wait after the run).
  await sleep(t.databaseUrl ? statsWaitMs : 1500);
  const meter = new CpuMeter(() => t.charged());
  const db0 = t.databaseUrl ? await databaseCounters(t.databaseUrl) : null;
  const e0 = await engineCounters(t.metricsUrls());
  await meter.start();
  const self0 = process.cpuUsage();
  const counts = await closedLoop(list, seconds);
  const spent = await meter.stop();
  const self = process.cpuUsage(self0);
  const eEnd = await engineCounters(t.metricsUrls());
  agent.destroy();
  // A PostgreSQL backend flushes its statistics at most once a second, and one that goes idle within
  // that second only when its idle timer fires, 10 s later (PGSTAT_IDLE_INTERVAL): wait that out so
  // every commit of the run is counted (the relay's idle rounds meanwhile count on both sides).
  await sleep(t.databaseUrl ? statsWaitMs : 0);
  const e1 = await engineCounters(t.metricsUrls());
  const db1 = t.databaseUrl ? await databaseCounters(t.databaseUrl) : null;
  const n = Math.max(1, counts.transitions);
  const write = (e1.commitStatements - e0.commitStatements) / n;
  const relay = (eEnd.outboxRounds - e0.outboxRounds) / n;
  // Minus the one commit of reading the counters before (the one after is not counted yet) and the
  // relay's idle rounds while waiting for the statistics.
  const total =
    db0 && db1 ? (db1.xactCommit - db0.xactCommit - 1 - (e1.outboxRounds - eEnd.outboxRounds)) / n : null;
  const commits: CommitSplit = { total, write, relay, other: total === null ? null : total - write - relay };
  const cpu = new Map([...spent].map(([name, ms]) => [name, ms / n]));
  const generatorCpu = (self.user + self.system) / 1000 / n;
  const rate = counts.transitions / seconds;
  const engineTransitions = e1.transitions - e0.transitions;
  const statements = e1.commitStatements - e0.commitStatements;
  // Every transition passes through baton_commit once (alone, or inside baton_commit_many).
  const one = db0 && db1 ? db1.batonCommitCalls - db0.batonCommitCalls : 0;
  const many = db0 && db1 ? db1.batonCommitManyCalls - db0.batonCommitManyCalls : 0;
  const functionMs = db0 && db1 ? db1.commitFunctionMs - db0.commitFunctionMs : 0;
  out(
    `Baton (MCP over HTTP, ${t.config.deployment === "embedded" ? "baton dev: every service in one process, PGlite" : `gateway → NATS → ${t.config.engines} engine${t.config.engines > 1 ? "s" : ""} → PostgreSQL`}): ${rate.toFixed(0)} transitions/s (${errorText(latencies)})`,
  );
  out(
    total === null
      ? `PostgreSQL commits per transition: write ${write.toFixed(2)}, outbox relay ${relay.toFixed(2)} (PGlite: other commits not counted)`
      : `PostgreSQL commits per transition: ${total.toFixed(2)} (write ${write.toFixed(2)}, outbox relay ${relay.toFixed(2)}, other ${(total - write - relay).toFixed(2)})`,
  );
  out(
    `  engine: ${statements} commit statements for ${engineTransitions} transitions (${(engineTransitions / Math.max(1, statements)).toFixed(2)} per statement)` +
      (db0 && db1
        ? `; pg_stat_user_functions: baton_commit_many ${many} calls, baton_commit ${one} calls (alone or inside a group)${one === engineTransitions && many <= statements ? ", consistent" : ", NOT consistent with the engine's counters"}; ${(functionMs / Math.max(1, one)).toFixed(3)} ms per transition inside them (the commit's WAL flush not included)`
        : ""),
  );
  out(
    `CPU ms per transition: ${[...cpu, ["load generator", generatorCpu] as const]
      .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
      .join(", ")}`,
  );
  out(`latency ms p50/p95/p99:\n${latencyLines(latencies, ["start_run", "claim", "submit"])}`);
  return { rate, latencies, commits, cpu, generatorCpu };
}

interface ArrivalResult {
  latencies: Latencies;
  readyToClaim: number[];
}

async function arrival(t: Target): Promise<ArrivalResult> {
  const agent = keepAliveAgent();
  const latencies = new Latencies();
  const [starter] = await clientsOf(t, [{ kind: "agent", id: "a_bench_starter" }], latencies, agent);
  const agents = await clientsOf(
    t,
    Array.from({ length: Number(values.agents ?? clients) }, (_, i) => ({
      kind: "agent" as const,
      id: `a_bench_worker_${i}`,
    })),
    latencies,
    agent,
  );
  const people = await clientsOf(
    t,
    Array.from({ length: Number(values.people) }, (_, i) => ({
      kind: "person" as const,
      id: `approver${i}@example.com`,
      groups: [APPROVER_GROUP],
    })),
    latencies,
    agent,
  );
  const rate = Number(values.rate);
  const pollMs = Number(values["poll-ms"]);
  const counts = await arrivalLoop({
    starter: starter as BenchClient,
    agents,
    people,
    rate,
    seconds,
    pollMs,
  });
  agent.destroy();
  out(
    `arrival: ${rate} runs/s offered for ${seconds} s (${counts.offered} runs), ${agents.length} agents and ${people.length} people polling every ${pollMs} ms: ${counts.runs} started, ${counts.decided} approved, ${(counts.transitions / seconds).toFixed(0)} transitions/s, ${counts.conflicts} conflicts (lost races), ${errorText(latencies)}`,
  );
  out(
    `latency ms p50/p95/p99:\n${latencyLines(latencies, ["start_run", "get_work", "claim", "submit", "decide"])}`,
  );
  out(
    `ready → claim ms p50/p95/p99: ${quantiles(counts.readyToClaim)} (${counts.readyToClaim.length} claims)`,
  );
  return { latencies, readyToClaim: counts.readyToClaim };
}

/** How far pgbench's rates before and after a configuration may differ before the bench says so. */
const DRIFT_NOTED = 0.2;

/**
 * pgbench again after a configuration's closed loop, and the ratio against the mean of `before` and
 * this run (both printed): the machine's speed while Baton ran, as well as two samples can say.
 */
async function ratioAfter(rate: number, before: number): Promise<{ ratio: number; after: number }> {
  const after = await pgbenchRate(clients, seconds);
  const baseline = (before + after) / 2;
  out(
    `PostgreSQL baseline again, after Baton: ${after.toFixed(0)} commits/s (before: ${before.toFixed(0)}; the ratio uses their mean, ${baseline.toFixed(0)})`,
  );
  if (Math.abs(after / before - 1) > DRIFT_NOTED)
    out(
      `  pgbench moved by ${(((after - before) / before) * 100).toFixed(0)} % across the run: the machine's speed changed while Baton ran; read this ratio with care, and run again`,
    );
  const ratio = rate / baseline;
  out(`ratio Baton / PostgreSQL: ${ratio.toFixed(3)}`);
  return { ratio, after };
}

out(`clients ${clients}, ${seconds} s each`);
let pgBefore = runClosed ? await pgbenchRate(clients, seconds) : Number.NaN;
if (runClosed)
  out(`PostgreSQL baseline (pgbench, one transition-shaped commit): ${pgBefore.toFixed(0)} commits/s`);
const build = !values.source && configs.some((c) => c.deployment === "distributed") ? compiledCli() : null;
const rows: Row[] = [];
try {
  for (const config of configs) {
    if (configs.length > 1)
      out(
        `\n## ${config.deployment}${config.deployment === "distributed" ? `, ${config.engines} engine${config.engines > 1 ? "s" : ""}` : ""}`,
      );
    const target = await start(config, build?.cli ?? null);
    let c: ClosedResult | null = null;
    let a: Awaited<ReturnType<typeof arrival>> | null = null;
    try {
      await target.deployment.publish(join(REPO, "bench/processes/bench-step"));
      await target.deployment.publish(join(REPO, "bench/processes/bench-approval"), {
        approver: APPROVER_GROUP,
      });
      c = runClosed ? await closed(target) : null;
      a = runArrival ? await arrival(target) : null;
    } finally {
      await target.deployment.stop();
    }
    // pgbench again once every Baton process is gone, so it has the machine to itself as before.
    const measured = c ? await ratioAfter(c.rate, pgBefore) : null;
    if (measured) pgBefore = measured.after;
    rows.push({
      deployment: config.deployment,
      engines: config.engines,
      rate: c?.rate ?? null,
      ratio: measured?.ratio ?? null,
      commits: c?.commits ?? null,
      cpu: c?.cpu ?? null,
      generatorCpu: c?.generatorCpu ?? null,
      closed: c?.latencies ?? null,
      arrival: a?.latencies ?? null,
      readyToClaim: a?.readyToClaim ?? null,
      errors: (c?.latencies.errors ?? 0) + (a?.latencies.errors ?? 0),
    });
  }
} finally {
  if (build) rmSync(build.dir, { recursive: true, force: true });
}
out(`\n${table(rows)}\n\n${MODEL_NOTE}`);
