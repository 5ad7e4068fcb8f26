// The engine service's configuration, read once from the environment.
import { hostname } from "node:os";
import { CHECK_ENV, checkEnvIssues, checkSettings } from "@baton/check";
import { OPS_ENV, SHARED_ENV } from "@baton/kit";
import { DEFAULTS } from "@baton/protocol";
import { z } from "zod";
import type { EngineSettings } from "./start.ts";

/**
 * The engine service's configuration, from the environment (CONVENTIONS: parsed once at start; every
 * problem listed). `BATON_PARTITIONS`, `BATON_LEASE_SECONDS`, `BATON_RUN_DATA_BYTES` and
 * `BATON_SECRET` must be the same on every service; `BATON_CHECK_*` the same on the gateway, the
 * registry and the engine (check.md §5).
 */
export const EngineConfigSchema = z
  .object({
    DATABASE_URL: SHARED_ENV.DATABASE_URL,
    NATS_URL: SHARED_ENV.NATS_URL,
    BATON_NAMESPACE: SHARED_ENV.BATON_NAMESPACE,
    BATON_SECRET: SHARED_ENV.BATON_SECRET,
    BATON_PARTITIONS: SHARED_ENV.BATON_PARTITIONS,
    BATON_LEASE_SECONDS: SHARED_ENV.BATON_LEASE_SECONDS,
    BATON_RUN_DATA_BYTES: SHARED_ENV.BATON_RUN_DATA_BYTES,
    BATON_OPERATOR_GROUP: z
      .string()
      .min(1)
      .default(DEFAULTS.operatorGroup)
      .describe(
        "Group id the operator queue (escalated steps) is assigned to; people with the operator role see it too. Membership comes from the token's groups claim, so whoever your identity provider puts in this group may decide escalations: choose a group only operators are in.",
      ),
    BATON_REPLICA_ID: z
      .string()
      .min(1)
      .optional()
      .describe("This replica's name in partition ownership and logs (default: hostname-pid)."),
    BATON_DB_POOL: z.coerce
      .number()
      .int()
      .min(1)
      .default(10)
      .describe("PostgreSQL connections in this process's pool."),
    BATON_IDEMPOTENCY_RETENTION_HOURS: SHARED_ENV.BATON_IDEMPOTENCY_RETENTION_HOURS,
    BATON_EVENTS_MAX_AGE_HOURS: SHARED_ENV.BATON_EVENTS_MAX_AGE_HOURS,
    BATON_EVENTS_MAX_BYTES: SHARED_ENV.BATON_EVENTS_MAX_BYTES,
    BATON_CLOCK: SHARED_ENV.BATON_CLOCK,
    BATON_ATTEMPT_TIMEOUT_MS: SHARED_ENV.BATON_ATTEMPT_TIMEOUT_MS,
    BATON_LOG_LEVEL: SHARED_ENV.BATON_LOG_LEVEL,
    ...OPS_ENV,
    ...CHECK_ENV,
  })
  .superRefine(checkEnvIssues);
export type EngineEnv = z.infer<typeof EngineConfigSchema>;

/** An engine replica's settings from its environment; the replica is `hostname-pid` unless named. */
export function engineSettings(env: EngineEnv): EngineSettings {
  const check = checkSettings(env);
  return {
    replicaId: env.BATON_REPLICA_ID ?? `${hostname()}-${process.pid}`,
    partitions: env.BATON_PARTITIONS,
    leaseMs: env.BATON_LEASE_SECONDS * 1000,
    runDataBytes: env.BATON_RUN_DATA_BYTES,
    operatorGroup: env.BATON_OPERATOR_GROUP,
    secret: env.BATON_SECRET,
    callTimeoutMs: 10_000,
    attemptMs: env.BATON_ATTEMPT_TIMEOUT_MS,
    idempotencyRetentionMs: env.BATON_IDEMPOTENCY_RETENTION_HOURS * 3_600_000,
    check: check.limits,
    evaluator: check.evaluator,
  };
}
