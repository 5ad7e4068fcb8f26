/**
 * The bench's printed report (issue #15): the lines of one measured configuration, and the one
 * markdown table of every configuration measured, with the rate modeled at N cores.
 */
import type { Latencies } from "./client.ts";

/** The p-th percentile (0–100, nearest rank) of `values`, or NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

/** `p50/p95/p99` of `values` in ms, one decimal; `—` when there are none. */
export function quantiles(values: readonly number[]): string {
  if (values.length === 0) return "—";
  return [50, 95, 99].map((p) => percentile(values, p).toFixed(1)).join("/");
}

/** `p99` of one tool's latencies, ms, or `—`. */
export function p99(latencies: Latencies | undefined, tool: string): string {
  const list = latencies?.byTool.get(tool);
  return list && list.length > 0 ? percentile(list, 99).toFixed(1) : "—";
}

/** One line per tool: `tool: n calls, p50/p95/p99 ms`. */
export function latencyLines(latencies: Latencies, tools: readonly string[]): string {
  return tools
    .filter((t) => latencies.byTool.has(t))
    .map((t) => {
      const list = latencies.byTool.get(t) as number[];
      return `  ${t}: ${list.length} calls, p50/p95/p99 ${quantiles(list)} ms`;
    })
    .join("\n");
}

/** The errors of a phase: their count and, when any, each code with its count. */
export function errorText(latencies: Latencies): string {
  if (latencies.errors === 0) return "0 errors";
  const codes = [...latencies.errorCodes].map(([code, n]) => `${code} ×${n}`).join(", ");
  return `${latencies.errors} errors: ${codes}`;
}

/** PostgreSQL commits per transition, split (the closed loop; `null` when not measured, embedded). */
export interface CommitSplit {
  /** Every commit of the deployment's database (`xact_commit` delta), or null (PGlite). */
  total: number | null;
  /** Engine commit statements (`baton_commit` or `baton_commit_many`), each one transaction. */
  write: number;
  /** Outbox relay transactions. */
  relay: number;
  /** The rest of `total` (reads in transactions, the notifier's reads and records, registry, scheduler, …), or null. */
  other: number | null;
}

/** One measured configuration, as the table shows it. */
export interface Row {
  deployment: "embedded" | "distributed";
  engines: number;
  /** Closed loop: acknowledged transitions per second (null when the closed loop did not run). */
  rate: number | null;
  ratio: number | null;
  commits: CommitSplit | null;
  /** Closed loop: CPU ms per transition, by process name (server side). */
  cpu: Map<string, number> | null;
  /** The load generator's own CPU ms per transition. */
  generatorCpu: number | null;
  closed: Latencies | null;
  arrival: Latencies | null;
  readyToClaim: number[] | null;
  errors: number;
}

/** Server CPU ms per transition: every process but the load generator. */
export function totalCpu(cpu: Map<string, number>): number {
  let sum = 0;
  for (const ms of cpu.values()) sum += ms;
  return sum;
}

/** The model's core counts. */
export const MODEL_CORES = [2, 4, 8] as const;

/** The threads `baton dev` keeps busy, so the cores its model may use: the event loop and PGlite's. */
export const EMBEDDED_THREADS = 2;

/**
 * Transitions per second at `cores` fully used cores, from the CPU one transition costs across
 * every server process: `cores × 1000 / (CPU ms per transition)`.
 */
export function modeled(cores: number, cpuMsPerTransition: number): number {
  return (cores * 1000) / cpuMsPerTransition;
}

const n0 = (x: number | null) => (x === null ? "—" : x.toFixed(0));
const n2 = (x: number | null) => (x === null ? "—" : x.toFixed(2));

/** The header of {@link table} (the smoke test looks for it). */
export const TABLE_HEADER =
  "| deployment | engines | transitions/s | ratio to pgbench | commits/transition (write + relay + other) | CPU ms/transition by process | CPU ms/transition total | generator CPU ms/transition | closed p99 ms start_run/claim/submit | arrival p99 ms start_run/get_work/claim/submit/decide | ready→claim p99 ms | modeled transitions/s at 2/4/8 cores | errors |";

/** Every configuration measured, as one markdown table. */
export function table(rows: readonly Row[]): string {
  const lines = [TABLE_HEADER, `|${" --- |".repeat(TABLE_HEADER.split("|").length - 2)}`];
  for (const r of rows) {
    const c = r.commits;
    const commits = c ? `${n2(c.total)} (${n2(c.write)} + ${n2(c.relay)} + ${n2(c.other)})` : "—";
    const cpu = r.cpu
      ? [...r.cpu]
          .filter(([, ms]) => ms >= 0.005)
          .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
          .join(" · ")
      : "—";
    const total = r.cpu ? totalCpu(r.cpu) : null;
    // `baton dev` works on two threads however many cores the machine has: the event loop, and
    // PGlite's own thread (libs/db/src/pglite-thread.ts) since cf39a06. Before, PGlite ran in the
    // event loop and the model said one core; measured runs then passed that "upper bound".
    const model = !total
      ? "—"
      : r.deployment === "embedded"
        ? `${modeled(EMBEDDED_THREADS, total).toFixed(0)} (two cores at most: the event loop and PGlite's thread)`
        : MODEL_CORES.map((n) => modeled(n, total).toFixed(0)).join(" / ");
    const closedP99 = ["start_run", "claim", "submit"].map((t) => p99(r.closed ?? undefined, t)).join(" / ");
    const arrivalP99 = r.arrival
      ? ["start_run", "get_work", "claim", "submit", "decide"]
          .map((t) => p99(r.arrival ?? undefined, t))
          .join(" / ")
      : "—";
    const ready =
      r.readyToClaim && r.readyToClaim.length > 0 ? percentile(r.readyToClaim, 99).toFixed(1) : "—";
    lines.push(
      `| ${r.deployment} | ${r.deployment === "embedded" ? "1 (in process)" : r.engines} | ${n0(r.rate)} | ${r.ratio === null ? "—" : r.ratio.toFixed(3)} | ${commits} | ${cpu} | ${n2(total)} | ${n2(r.generatorCpu)} | ${r.closed ? closedP99 : "—"} | ${arrivalP99} | ${ready} | ${model} | ${r.errors} |`,
    );
  }
  return lines.join("\n");
}

/** What the model column means, in one line. */
export const MODEL_NOTE =
  "modeled rate at N cores = N × 1000 / (server CPU ms per transition): every core busy with Baton's processes, PostgreSQL's backends and nats-server at the measured cost per transition — an upper bound that ignores lock and I/O waits, PostgreSQL's shared background processes and the load generator; embedded works on two threads (the event loop and PGlite's), so at most two cores.";
