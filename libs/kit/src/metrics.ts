// Baton's Prometheus metrics (issue #13): defined once, here, and read at `/metrics` (docs/observability.md).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The registry every Baton metric lives in: one per process (`baton serve <service>` exposes it on
 * its operations port, `baton dev` on its own port). Every service's process shows every name; a
 * service fills only its own (the engine its transitions, the scheduler its timers).
 */
export const registry = new Registry();

/** Seconds buckets for calls that usually take milliseconds and may take the whole call deadline. */
const CALL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];

/**
 * `baton_tool_calls_total{tool,outcome}`: tool calls answered by the gateway (tools.md), by tool and
 * outcome: `ok`, or the protocol's error code (§4.3: `invalid`, `conflict`, `retry`, …). Labels
 * never hold run ids, people or tokens: `tool` is one of the offered tools, `outcome` one of eight.
 */
export const toolCalls = new Counter({
  name: "baton_tool_calls_total",
  help: "Tool calls answered by the gateway, by tool and outcome (ok or the protocol error code).",
  labelNames: ["tool", "outcome"] as const,
  registers: [registry],
});

/** `baton_tool_duration_seconds{tool}`: from the call reaching the tool router to its answer, seconds. */
export const toolDuration = new Histogram({
  name: "baton_tool_duration_seconds",
  help: "Time a tool call took in the gateway, from its arguments to its answer, seconds.",
  labelNames: ["tool"] as const,
  buckets: CALL_BUCKETS,
  registers: [registry],
});

/** `baton_transitions_total`: run transitions committed by this engine replica (writes and timer ticks). */
export const transitions = new Counter({
  name: "baton_transitions_total",
  help: "Run transitions committed (each one a journal entry): tool writes and timer ticks.",
  registers: [registry],
});

/**
 * `baton_commit_statements_total`: commit statements this engine replica sent to PostgreSQL — a
 * `baton_commit` of one transition or a `baton_commit_many` of a group (issue #15) — each its own
 * transaction; with `baton_transitions_total` it shows what group commit saves.
 */
export const commitStatements = new Counter({
  name: "baton_commit_statements_total",
  help: "Commit statements sent to PostgreSQL (baton_commit of one transition or baton_commit_many of a group), each one transaction.",
  registers: [registry],
});

/**
 * `baton_outbox_rounds_total`: transactions of this engine replica's outbox relay — a round that
 * publishes the unpublished domain events (empty rounds included) or a clean-up of old rows.
 */
export const outboxRounds = new Counter({
  name: "baton_outbox_rounds_total",
  help: "Outbox relay transactions: rounds publishing unpublished domain events (empty ones included) and clean-ups.",
  registers: [registry],
});

/**
 * `baton_bus_request_duration_seconds{subject}`: a service call over the bus, attempts and retries
 * included, by the catalog's subject name (`engine.write` for every `engine.p<k>`; never the
 * partition or the namespace, so the label has a dozen values).
 */
export const busRequestDuration = new Histogram({
  name: "baton_bus_request_duration_seconds",
  help: "Service calls over the bus (NATS request/reply, or in process), retries included, by catalog subject, seconds.",
  labelNames: ["subject"] as const,
  buckets: CALL_BUCKETS,
  registers: [registry],
});

/** `baton_partitions_owned`: run partitions this engine replica serves now (ARCHITECTURE rule 5). */
export const partitionsOwned = new Gauge({
  name: "baton_partitions_owned",
  help: "Run partitions this engine replica owns and serves now.",
  registers: [registry],
});

/**
 * `baton_timers_due`: timers whose fire time has passed on the deployment's clock and that no tick
 * has applied yet (read from PostgreSQL by the scheduler when scraped).
 */
export const timersDue = new Gauge({
  name: "baton_timers_due",
  help: "Timers due now and not yet applied (read from PostgreSQL by each scheduler replica when scraped).",
  registers: [registry],
});

/** `baton_timer_lag_seconds`: how late the oldest due timer is, seconds (0 when none is due). */
export const timerLag = new Gauge({
  name: "baton_timer_lag_seconds",
  help: "How long ago the oldest timer not yet applied fell due, seconds (0 when none is due).",
  registers: [registry],
});

/** `baton_steps_overdue`: open steps (agent steps ready or claimed, and people's work items) past their `due` (§2.2). */
export const stepsOverdue = new Gauge({
  name: "baton_steps_overdue",
  help: "Open steps past their due time (§2.2 due): agent steps ready or claimed, and open work items.",
  registers: [registry],
});

/** `baton_claim_leases_expired_total`: claims whose lease ended without a renewal (§3.3), applied by a tick. */
export const claimLeasesExpired = new Counter({
  name: "baton_claim_leases_expired_total",
  help: "Claim leases that ended without submit, renew or escalate, and freed their step (§3.3).",
  registers: [registry],
});

/**
 * `baton_notifications_total{channel,result}`: delivery attempts of the notifier, by channel
 * (`webhook`, `mail`) and result (`ok`, `failed`: retried later, `gone`: 410, the subscription is
 * disabled, `refused`: the target is not allowed).
 */
export const notifications = new Counter({
  name: "baton_notifications_total",
  help: "Notification delivery attempts, by channel (webhook, mail) and result (ok, failed, gone, refused).",
  labelNames: ["channel", "result"] as const,
  registers: [registry],
});

let processMetrics = false;

/**
 * Adds prom-client's default process metrics (CPU, memory, event-loop lag, handles; `process_*`
 * and `nodejs_*`) to {@link registry}, once per process.
 */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: registry });
}

/**
 * Registers `collect` to run before each scrape (a gauge read from PostgreSQL, say); errors are
 * swallowed so a scrape never fails on one source. Returns a function that unregisters it.
 */
const collectors = new Set<() => Promise<void>>();
export function onScrape(collect: () => Promise<void>): () => void {
  collectors.add(collect);
  return () => collectors.delete(collect);
}

/** The Prometheus text of every metric, after the scrape-time collectors ran. */
export async function metricsText(): Promise<string> {
  await Promise.all([...collectors].map((c) => c().catch(() => undefined)));
  return registry.metrics();
}

/** The content type of {@link metricsText}. */
export const METRICS_CONTENT_TYPE = registry.contentType;

/** Seconds since `startMs` (a `performance.now()` reading). */
export function secondsSince(startMs: number): number {
  return (performance.now() - startMs) / 1000;
}
