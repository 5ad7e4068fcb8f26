// A service's environment: the variables several services read, and parsing it once at start.
import { DEFAULTS } from "@baton/protocol";
import { z } from "zod";

/**
 * What one attempt of a service call that is safe to send again waits for its reply by default, ms
 * (`BATON_ATTEMPT_TIMEOUT_MS`; bus `requestWithRetry`'s `attemptMs`).
 */
export const DEFAULT_ATTEMPT_MS = 3_000;

/**
 * Environment variables several services read (ARCHITECTURE "Configuration"), defined once so their
 * meaning, defaults and checks never drift apart. Each service's `config.ts` picks the ones it uses;
 * `docs/configuration.md` is generated from the result.
 */
export const SHARED_ENV = {
  DATABASE_URL: z
    .string()
    .min(1)
    .describe("PostgreSQL connection URL (the truth: processes, runs, journal, idempotency, timers, files)."),
  NATS_URL: z.string().min(1).describe("NATS server URL; JetStream must be enabled."),
  BATON_NAMESPACE: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,31}$/)
    .default("baton")
    .describe(
      "Prefix of every NATS subject, stream and KV bucket, so several deployments can share one NATS.",
    ),
  BATON_SECRET: z
    .string()
    .min(16)
    .describe(
      "Server secret (at least 16 characters) that claim tokens, file URLs and run ids derive from. Read by the gateway and the engine (no other service), the same on every replica of both.",
    ),
  BATON_PARTITIONS: z.coerce
    .number()
    .int()
    .min(1)
    .max(4096)
    .default(DEFAULTS.partitions)
    .describe(
      "Virtual run partitions P (partition = fnv1a32(runId) mod P). Same on every service that reads it; never change it on a live database. Each partition is owned by one engine replica at a time, so P bounds the engine replicas that do work: more replicas than P own nothing.",
    ),
  BATON_LEASE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(DEFAULTS.leaseSeconds)
    .describe("Claim lease length (describe.leaseSeconds). Same on gateway and engine."),
  BATON_RUN_DATA_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(DEFAULTS.runDataBytes)
    .describe(
      "Cap on run data, inputs at start and held event data (describe.limits.runDataBytes). Same on gateway and engine.",
    ),
  BATON_CLOCK: z
    .enum(["real", "manual"])
    .default("real")
    .describe(
      "real: wall-clock time. manual: a clock shared by every service through NATS KV that moves only by POST /api/clock/advance (baton clock advance); for tests and trials. Same on every service.",
    ),
  BATON_ATTEMPT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(DEFAULT_ATTEMPT_MS)
    .describe(
      "How long one attempt of a service call that is safe to send again (an idempotent write, a read, a tick) waits for its reply before it is sent again, ms. The replica it went to may have died with it; the new attempt reaches whichever replica serves the subject then (an engine partition's new owner). Always within the call's own deadline.",
    ),
  BATON_LOG_LEVEL: z
    .enum(["debug", "info", "warn", "error"])
    .default("info")
    .describe("Log level (JSON lines on stdout)."),
} as const;

/**
 * Parses the environment with a service's schema; on failure prints every problem and exits 2
 * (CONVENTIONS: "on failure it lists every problem and exits"). Secrets are never printed. The
 * message names `command` (default `baton serve <service>`).
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv,
  service: string,
  command = `baton serve ${service}`,
): z.infer<S> {
  const parsed = schema.safeParse(env, { reportInput: true });
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => {
    const missing = i.code === "invalid_type" && i.input === undefined;
    // Never print a value: an environment holds secrets.
    return `  ${i.path.join(".") || "environment"}: ${missing ? "required" : i.message.replace(/, received .*/, "")}`;
  });
  process.stderr.write(`${command}: the environment is not usable:\n${lines.join("\n")}\n`);
  process.exit(2);
}
