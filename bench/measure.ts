/**
 * What the bench reads around a run (issue #15): CPU time of processes from `/proc`, PostgreSQL's
 * commit and function counters of one database, and the engine's Prometheus counters.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";
import { metricSum } from "../test/support/metrics.ts";

const TICKS_PER_S = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/**
 * CPU time (user + system) of process `pid` so far, ms, from `/proc/<pid>/stat` (clock ticks, 10 ms
 * each on Linux); null when the process is gone.
 */
export function cpuMs(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces) start at ") ": utime is 14th, stime 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * (1000 / TICKS_PER_S);
}

/** A process the bench charges CPU to: the name of its row (`engine`, `postgres`, …) and its pid. */
export interface Charged {
  name: string;
  pid: number;
}

/**
 * CPU ms spent by named processes between {@link CpuMeter.start} and {@link CpuMeter.stop}, summed
 * by name. `list` is asked at both ends: a pid seen only at the end (a PostgreSQL backend a pool
 * opened during the run) is charged its whole CPU time; a pid gone by the end is charged nothing.
 */
export class CpuMeter {
  private before = new Map<number, number>();

  constructor(private readonly list: () => Promise<Charged[]>) {}

  async start(): Promise<void> {
    this.before = new Map();
    for (const { pid } of await this.list()) {
      const ms = cpuMs(pid);
      if (ms !== null) this.before.set(pid, ms);
    }
  }

  /** CPU ms per name since {@link start}. */
  async stop(): Promise<Map<string, number>> {
    const spent = new Map<string, number>();
    for (const { name, pid } of await this.list()) {
      const ms = cpuMs(pid);
      if (ms === null) continue;
      spent.set(name, (spent.get(name) ?? 0) + ms - (this.before.get(pid) ?? 0));
    }
    return spent;
  }
}

/** The pids of the client backends connected to database `database` (`pg_stat_activity`), but this one. */
export async function postgresBackends(adminUrl: string, database: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const { rows } = await c.query(
      "select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend' and pid <> pg_backend_pid()",
      [database],
    );
    return rows.map((r: { pid: number }) => Number(r.pid));
  } finally {
    await c.end();
  }
}

/**
 * The pid of the machine's nats-server the deployment uses: the one `nats-server` process whose
 * command line names no other client port than `port` (private test servers run on other ports);
 * null when it cannot be told apart.
 */
export function natsServerPid(port: number): number | null {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "nats-server") continue;
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const i = argv.findIndex((a) => a === "-p" || a === "--port" || a === "-port");
      const own = i >= 0 ? Number(argv[i + 1]) : 4222;
      if (own === port) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found.length === 1 ? (found[0] as number) : null;
}

/** PostgreSQL's counters of one database: commits and the calls of the engine's commit functions. */
export interface DatabaseCounters {
  /** `pg_stat_database.xact_commit`. */
  xactCommit: number;
  /** Calls of `baton_commit` (top-level, and one per transition inside `baton_commit_many`). */
  batonCommitCalls: number;
  /** Calls of `baton_commit_many`. */
  batonCommitManyCalls: number;
  /**
   * Time PostgreSQL spent inside `baton_commit` and `baton_commit_many`, ms: the sum of their
   * `self_time`, so a nested call is counted once. The commit itself (the WAL flush) is outside it.
   */
  commitFunctionMs: number;
}

/**
 * Reads {@link DatabaseCounters} of the database at `url`, in one transaction of its own (which
 * counts one commit). `pg_stat_user_functions` counts only with `track_functions = pl`. Each
 * backend flushes its statistics at most once a second: wait that long after the load stops.
 */
export async function databaseCounters(url: string): Promise<DatabaseCounters> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(`select
      (select xact_commit from pg_stat_database where datname = current_database())::bigint as xact,
      coalesce((select sum(calls) from pg_stat_user_functions where funcname = 'baton_commit'), 0)::bigint as one,
      coalesce((select sum(calls) from pg_stat_user_functions where funcname = 'baton_commit_many'), 0)::bigint as many,
      coalesce((select sum(self_time) from pg_stat_user_functions
        where funcname in ('baton_commit', 'baton_commit_many')), 0)::float8 as ms`);
    const r = rows[0] as { xact: string; one: string; many: string; ms: number };
    return {
      xactCommit: Number(r.xact),
      batonCommitCalls: Number(r.one),
      batonCommitManyCalls: Number(r.many),
      commitFunctionMs: Number(r.ms),
    };
  } finally {
    await c.end();
  }
}

/** The engine counters the bench reads from `/metrics` (summed over the engine replicas' URLs). */
export interface EngineCounters {
  /** `baton_transitions_total`. */
  transitions: number;
  /** `baton_commit_statements_total`: write commits. */
  commitStatements: number;
  /** `baton_outbox_rounds_total`: relay transactions. */
  outboxRounds: number;
}

/** Scrapes every URL's Prometheus text and sums the {@link EngineCounters}. */
export async function engineCounters(metricsUrls: string[]): Promise<EngineCounters> {
  const sum: EngineCounters = { transitions: 0, commitStatements: 0, outboxRounds: 0 };
  for (const url of metricsUrls) {
    const text = await (await fetch(url)).text();
    sum.transitions += metricSum(text, "baton_transitions_total");
    sum.commitStatements += metricSum(text, "baton_commit_statements_total");
    sum.outboxRounds += metricSum(text, "baton_outbox_rounds_total");
  }
  return sum;
}
