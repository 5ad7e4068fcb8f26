// The scheduler service's configuration, read once from the environment.
import { hostname } from "node:os";
import { OPS_ENV, SHARED_ENV } from "@baton/kit";
import { z } from "zod";
import type { SchedulerSettings } from "./app.ts";
import type { SchedulerFault } from "./start.ts";

/**
 * The scheduler's settings when nothing says otherwise: the environment's defaults here, and what
 * `baton dev` runs with. Units as in {@link SchedulerSettings} (ms).
 */
export const SCHEDULER_DEFAULTS = {
  clockOrg: "default",
  pollMs: 1_000,
  holdMs: 30_000,
  backoffMs: 1_000,
  batch: 100,
  concurrency: 16,
  tickTimeoutMs: 15_000,
  idempotencyRetentionMs: 168 * 3_600_000,
  retentionIntervalMs: 600_000,
} as const;

/**
 * The scheduler service's configuration, from the environment (CONVENTIONS: parsed once at start;
 * every problem listed). Run any number of replicas: they share the due timers through PostgreSQL.
 */
export const SchedulerConfigSchema = z.object({
  DATABASE_URL: SHARED_ENV.DATABASE_URL,
  NATS_URL: SHARED_ENV.NATS_URL,
  BATON_NAMESPACE: SHARED_ENV.BATON_NAMESPACE,
  BATON_CLOCK: SHARED_ENV.BATON_CLOCK,
  BATON_PARTITIONS: SHARED_ENV.BATON_PARTITIONS,
  BATON_CLOCK_ORG: z
    .string()
    .min(1)
    .default(SCHEDULER_DEFAULTS.clockOrg)
    .describe(
      "The organization whose operators may move a manual clock (POST /api/clock/advance). The clock is one for the whole deployment; operators of other organizations may read it, not move it.",
    ),
  BATON_SCHEDULER_POLL_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(SCHEDULER_DEFAULTS.pollMs)
    .describe(
      "Longest sleep between looks for due timers, ms. With real time the scheduler also wakes at the next timer's fire time; a manual clock wakes it when it moves.",
    ),
  BATON_SCHEDULER_CLAIM_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(SCHEDULER_DEFAULTS.holdMs)
    .describe(
      "The timer hold: how long a replica holds the due timers it took while it delivers them, ms, measured by PostgreSQL's clock (so replicas whose host clocks disagree still agree when a hold ends). If it dies first, another replica takes them after this. (Named CLAIM for compatibility; not a claim of the protocol.)",
    ),
  BATON_SCHEDULER_BACKOFF_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(SCHEDULER_DEFAULTS.backoffMs)
    .describe(
      "How long a due timer whose tick changed nothing (the engine's clock has not reached it yet) or could not be delivered is left before it is taken again, ms (PostgreSQL's clock).",
    ),
  BATON_SCHEDULER_BATCH: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(SCHEDULER_DEFAULTS.batch)
    .describe("Due timers taken per round."),
  BATON_SCHEDULER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(SCHEDULER_DEFAULTS.concurrency)
    .describe("Runs whose due timers are delivered to the engine at once."),
  BATON_CALL_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(SCHEDULER_DEFAULTS.tickTimeoutMs)
    .describe(
      "How long delivering one run's tick may take, retries included (an engine partition changing hands answers no one for a moment), ms.",
    ),
  BATON_SCHEDULER_FAULT: z
    .enum(["kill-after-take", "kill-after-send"])
    .optional()
    .describe(
      "TEST HOOK, never set in production: the replica SIGKILLs itself right after it first takes due timers (kill-after-take) or right after it first sends their ticks (kill-after-send), for the exactly-once tests.",
    ),
  BATON_REPLICA_ID: z
    .string()
    .min(1)
    .optional()
    .describe("This replica's name in its timer holds and logs (default: hostname-pid)."),
  BATON_DB_POOL: z.coerce
    .number()
    .int()
    .min(1)
    .default(4)
    .describe("PostgreSQL connections in this process's pool."),
  BATON_IDEMPOTENCY_RETENTION_HOURS: SHARED_ENV.BATON_IDEMPOTENCY_RETENTION_HOURS,
  BATON_RETENTION_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(SCHEDULER_DEFAULTS.retentionIntervalMs)
    .describe(
      "How often a scheduler replica deletes the idempotency records older than BATON_IDEMPOTENCY_RETENTION_HOURS, ms (in batches of 1,000, never on a call's path).",
    ),
  BATON_ATTEMPT_TIMEOUT_MS: SHARED_ENV.BATON_ATTEMPT_TIMEOUT_MS,
  BATON_LOG_LEVEL: SHARED_ENV.BATON_LOG_LEVEL,
  ...OPS_ENV,
});
export type SchedulerEnv = z.infer<typeof SchedulerConfigSchema>;

/** A scheduler replica's settings from its environment; the replica is `hostname-pid` unless named. */
export function schedulerSettings(
  env: SchedulerEnv,
): SchedulerSettings & { fault?: SchedulerFault | undefined } {
  return {
    replicaId: env.BATON_REPLICA_ID ?? `${hostname()}-${process.pid}`,
    pollMs: env.BATON_SCHEDULER_POLL_MS,
    holdMs: env.BATON_SCHEDULER_CLAIM_MS,
    backoffMs: env.BATON_SCHEDULER_BACKOFF_MS,
    partitions: env.BATON_PARTITIONS,
    batch: env.BATON_SCHEDULER_BATCH,
    concurrency: env.BATON_SCHEDULER_CONCURRENCY,
    tickTimeoutMs: env.BATON_CALL_TIMEOUT_MS,
    attemptMs: env.BATON_ATTEMPT_TIMEOUT_MS,
    clockOrg: env.BATON_CLOCK_ORG,
    idempotencyRetentionMs: env.BATON_IDEMPOTENCY_RETENTION_HOURS * 3_600_000,
    retentionIntervalMs: env.BATON_RETENTION_INTERVAL_MS,
    fault: env.BATON_SCHEDULER_FAULT,
  };
}
