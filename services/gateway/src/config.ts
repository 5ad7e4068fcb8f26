import { DEFAULTS } from "@baton/protocol";
import { z } from "zod";

/**
 * The gateway's configuration, from the environment. Tokens are verified either against an issuer's
 * JWKS (`BATON_AUTH_ISSUER` + `BATON_AUTH_JWKS_URL`, production) or the dev issuer's key file
 * (`BATON_DEV_ISSUER_FILE`, for tests and trials). `BATON_PARTITIONS`, `BATON_LEASE_SECONDS`,
 * `BATON_RUN_DATA_BYTES` and `BATON_SECRET` must equal the engine's.
 */
export const GatewayConfigSchema = z
  .object({
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
        "Server secret (at least 16 characters) that claim tokens, file URLs and run ids derive from. Same on every service.",
      ),
    BATON_PUBLIC_URL: z
      .url()
      .describe("Public base URL; the MCP resource (token audience) is <BATON_PUBLIC_URL>/mcp."),
    BATON_CLOCK: z
      .enum(["real", "manual"])
      .default("real")
      .describe(
        "real: wall-clock time. manual: a clock shared by every service through NATS KV that moves only by POST /api/clock/advance (baton clock advance); for tests and trials. Same on every service.",
      ),
    BATON_HOST: z.string().default("0.0.0.0").describe("Address to listen on."),
    BATON_PORT: z.coerce.number().int().min(0).max(65535).default(7800).describe("Port to listen on."),
    BATON_AUTH_ISSUER: z.string().optional().describe("Issuer (iss) of bearer tokens."),
    BATON_AUTH_JWKS_URL: z.url().optional().describe("JWKS URL of the issuer's signing keys."),
    BATON_DEV_ISSUER_FILE: z
      .string()
      .optional()
      .describe(
        "Instead of an issuer: the dev issuer key file that baton token signs with (trials and tests only).",
      ),
    BATON_BLOB_DIR: z
      .string()
      .min(1)
      .describe(
        "Directory holding file bytes, content-addressed per organization; shared by gateway and evidence.",
      ),
    BATON_PARTITIONS: z.coerce
      .number()
      .int()
      .min(1)
      .max(4096)
      .default(DEFAULTS.partitions)
      .describe(
        "Virtual run partitions P (partition = fnv1a32(runId) mod P). Same on every service; never change it on a live database.",
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
    BATON_MAX_UPLOAD_BYTES: z.coerce
      .number()
      .int()
      .min(1)
      .default(DEFAULTS.maxUploadBytes)
      .describe("Largest upload accepted, bytes (describe.maxUploadBytes)."),
    BATON_CALL_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .default(15_000)
      .describe("How long a tool call may wait on the services before answering retry, ms."),
    BATON_LOG_LEVEL: z
      .enum(["debug", "info", "warn", "error"])
      .default("info")
      .describe("Log level (JSON lines on stdout)."),
  })
  .refine((c) => c.BATON_DEV_ISSUER_FILE !== undefined || (c.BATON_AUTH_ISSUER && c.BATON_AUTH_JWKS_URL), {
    message: "set BATON_AUTH_ISSUER and BATON_AUTH_JWKS_URL, or BATON_DEV_ISSUER_FILE",
    path: ["BATON_AUTH_JWKS_URL"],
  })
  .describe(
    "Bearer tokens: set either BATON_AUTH_ISSUER and BATON_AUTH_JWKS_URL (production), or BATON_DEV_ISSUER_FILE (trials and tests); one of the two is required.",
  );
export type GatewayEnv = z.infer<typeof GatewayConfigSchema>;
