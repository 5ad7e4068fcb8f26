import { z } from "zod";

/** The registry service's configuration, from the environment. */
export const RegistryConfigSchema = z.object({
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
  BATON_CLOCK: z
    .enum(["real", "manual"])
    .default("real")
    .describe(
      "real: wall-clock time. manual: a clock shared by every service through NATS KV that moves only by POST /api/clock/advance (baton clock advance); for tests and trials. Same on every service.",
    ),
  BATON_LOG_LEVEL: z
    .enum(["debug", "info", "warn", "error"])
    .default("info")
    .describe("Log level (JSON lines on stdout)."),
});
export type RegistryEnv = z.infer<typeof RegistryConfigSchema>;
