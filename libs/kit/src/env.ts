// A service's environment: the variables several services read, and parsing it once at start.
import { DEFAULTS } from "@baton/protocol";
import { z } from "zod";
import { addressesOf } from "./startup.ts";

/**
 * What one attempt of a service call that is safe to send again waits for its reply by default, ms
 * (`BATON_ATTEMPT_TIMEOUT_MS`; bus `requestWithRetry`'s `attemptMs`).
 */
export const DEFAULT_ATTEMPT_MS = 3_000;

/** The operations server's port when `BATON_OPS_PORT` is not set (the OpenTelemetry Prometheus exporter's usual one). */
export const DEFAULT_OPS_PORT = 9464;

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
  BATON_IDEMPOTENCY_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .default(168)
    .describe(
      "How long a write's idempotency record (its requestId and recorded result, §4.3) is kept, hours of the deployment's clock; the scheduler prunes older ones. Within it a replay returns the original result; after it a replay on a run is answered conflict from the run's journal (never applied twice; start_run never, whatever the age), and an upload makes a second file record of the same bytes. Same on engine and scheduler. docs/observability.md, Retention.",
    ),
  BATON_EVENTS_MAX_AGE_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .default(168)
    .describe(
      "Domain events older than this are dropped from the JetStream events stream (the notifier's source), hours. Same on engine and notifier.",
    ),
  BATON_EVENTS_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1_048_576)
    .default(1_073_741_824)
    .describe(
      "Largest size of the JetStream events stream, bytes; past it the oldest events are dropped. Same on engine and notifier.",
    ),
  BATON_OPS_PORT: z
    .union([z.literal("off"), z.coerce.number().int().min(0).max(65535)])
    .default(DEFAULT_OPS_PORT)
    .describe(
      "Port of the operations server: /healthz (alive), /readyz (ready: PostgreSQL, NATS, S3 where used, an engine's partition ownership) and /metrics (Prometheus). Apart from the gateway's public port, so agents never reach it. 0: any free port (logged in the line 'operations server listening'); off: no operations server. Several services on one host need one port each.",
    ),
  BATON_OPS_HOST: z
    .string()
    .min(1)
    .default("0.0.0.0")
    .describe(
      "Address the operations server listens on (default every interface, so the kubelet and Prometheus reach it; 127.0.0.1 keeps it on the host).",
    ),
  BATON_STARTUP_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .default(60)
    .describe(
      "How long start-up waits for PostgreSQL and NATS to answer, seconds, retrying with back-off (0.5 s doubling to 5 s) and logging each failure with the variable and address; then the service exits 1 naming them. 0: one attempt.",
    ),
  BATON_DRAIN_DELAY_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(120_000)
    .default(0)
    .describe(
      "On SIGTERM the service answers /readyz 503 at once, waits this long (ms) still serving, then drains (answers what is in flight, takes nothing new) and exits. On Kubernetes set it to a few seconds, so the endpoints drop the pod before it stops taking calls.",
    ),
} as const;

/**
 * The variables of the operations server, start-up and shutdown that every `baton serve` service
 * reads (`serve.ts`), to spread into each service's config schema.
 */
export const OPS_ENV = {
  BATON_OPS_PORT: SHARED_ENV.BATON_OPS_PORT,
  BATON_OPS_HOST: SHARED_ENV.BATON_OPS_HOST,
  BATON_STARTUP_TIMEOUT_SECONDS: SHARED_ENV.BATON_STARTUP_TIMEOUT_SECONDS,
  BATON_DRAIN_DELAY_MS: SHARED_ENV.BATON_DRAIN_DELAY_MS,
} as const;

/**
 * Options of a refinement across variables (`.refine(check, { ...always })`) that make it run even
 * when a variable it does not read failed on its own, so a start lists every problem at once
 * (issue #13). The check then sees a partly parsed value: it must not assume a failed variable's type.
 */
export const always = { when: () => true } as const;

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

/** Variables holding a connection URL (PostgreSQL, NATS, Redis, SMTP): logged as their `host:port` only. */
const CONNECTION_URL = /^(DATABASE|NATS|REDIS|BATON_SMTP)_URL$/;

/** Variable names whose values are secrets: never logged, not even in part. */
const SECRET_NAME = /SECRET|PASSWORD|PASSWD|TOKEN|PRIVATE|ACCESS_KEY/;

/**
 * A parsed environment as it may be logged at start (issue #13: start-up settings with secrets
 * hidden): a secret variable's value becomes `[hidden]` (`[hidden]` per item of a list), a
 * connection URL (`DATABASE_URL`, `NATS_URL`, `REDIS_URL`, `BATON_SMTP_URL`) only its `host:port`,
 * and another URL's password becomes `***`.
 */
export function settingsForLog(env: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (SECRET_NAME.test(key)) out[key] = Array.isArray(value) ? value.map(() => "[hidden]") : "[hidden]";
    // A connection URL may carry credentials in forms a parser misses: only where it points.
    else if (CONNECTION_URL.test(key) && typeof value === "string") out[key] = addressesOf(value, 0);
    else if (typeof value === "string" && value.includes("://")) out[key] = withoutPasswords(value);
    else out[key] = value;
  }
  return out;
}

/** `url` (or a comma-separated list of URLs) with each password replaced by `***`. */
function withoutPasswords(url: string): string {
  return url
    .split(",")
    .map((one) => {
      try {
        const u = new URL(one.trim());
        if (u.password) u.password = "***";
        if (u.search) u.search = u.search.replace(/(password|secret|token|key)=[^&]*/gi, "$1=***");
        return u.toString();
      } catch {
        return "[hidden]";
      }
    })
    .join(",");
}
