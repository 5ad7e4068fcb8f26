// The gateway's configuration, read once from the environment.
import {
  AUTH_ENV,
  authEnvProblems,
  bearerOptionsFromEnv,
  DEV_ISSUER,
  loadOrCreateDevIssuer,
  SECRET_RING_ENV,
} from "@baton/auth";
import { BLOB_ENV, BLOB_STORE_REQUIRED, blobStoreChosen } from "@baton/blob";
import { CHECK_ENV, checkEnvIssues, checkSettings } from "@baton/check";
import { always, OPS_ENV, SHARED_ENV } from "@baton/kit";
import { DEFAULTS } from "@baton/protocol";
import { z } from "zod";
import { CONSOLE_ENV, consoleEnvProblems, consoleSignInFromEnv } from "./console.ts";
import { ORIGIN_ENV } from "./origin.ts";
import { RATE_LIMIT_ENV, rateLimitsFromEnv } from "./rate-limit.ts";
import type { GatewaySettings } from "./start.ts";

/**
 * The gateway's configuration, from the environment. Tokens are verified either against an issuer's
 * JWKS (`BATON_AUTH_ISSUER` + `BATON_AUTH_JWKS_URL`, production) or the dev issuer's key file
 * (`BATON_DEV_ISSUER_FILE`, for tests and trials). `BATON_PARTITIONS`, `BATON_LEASE_SECONDS`,
 * `BATON_RUN_DATA_BYTES` and `BATON_SECRET` must equal the engine's.
 */
export const GatewayConfigSchema = z
  .object({
    NATS_URL: SHARED_ENV.NATS_URL,
    BATON_NAMESPACE: SHARED_ENV.BATON_NAMESPACE,
    BATON_SECRET: SHARED_ENV.BATON_SECRET,
    ...SECRET_RING_ENV,
    BATON_PUBLIC_URL: z
      .url()
      .describe("Public base URL; the MCP resource (token audience) is <BATON_PUBLIC_URL>/mcp."),
    BATON_CLOCK: SHARED_ENV.BATON_CLOCK,
    BATON_HOST: z
      .string()
      .default("0.0.0.0")
      .describe(
        "Address to listen on. Every interface by default, so the port a container publishes or a Kubernetes Service targets reaches the gateway; 127.0.0.1 when a proxy on the same host is the only way in (baton dev listens on 127.0.0.1).",
      ),
    BATON_PORT: z.coerce.number().int().min(0).max(65535).default(7800).describe("Port to listen on."),
    BATON_AUTH_ISSUER: z.string().optional().describe("Issuer (iss) of bearer tokens."),
    BATON_AUTH_JWKS_URL: z.url().optional().describe("JWKS URL of the issuer's signing keys."),
    ...AUTH_ENV,
    ...ORIGIN_ENV,
    ...RATE_LIMIT_ENV,
    BATON_DEV_ISSUER_FILE: z
      .string()
      .optional()
      .describe(
        "Instead of an issuer: the dev issuer key file that baton token signs with (trials and tests only).",
      ),
    ...BLOB_ENV,
    ...CHECK_ENV,
    BATON_FILE_URL_SECONDS: z.coerce
      .number()
      .int()
      .min(10)
      .max(7 * 24 * 3600)
      .default(DEFAULTS.fileUrlTtlMs / 1000)
      .describe(
        "Lifetime of the short-lived file url in run data, seconds: a presigned S3 GET, or the gateway's signed /files link with a local store.",
      ),
    BATON_PARTITIONS: SHARED_ENV.BATON_PARTITIONS,
    BATON_LEASE_SECONDS: SHARED_ENV.BATON_LEASE_SECONDS,
    BATON_RUN_DATA_BYTES: SHARED_ENV.BATON_RUN_DATA_BYTES,
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
    BATON_ATTEMPT_TIMEOUT_MS: SHARED_ENV.BATON_ATTEMPT_TIMEOUT_MS,
    BATON_LOG_LEVEL: SHARED_ENV.BATON_LOG_LEVEL,
    ...OPS_ENV,
    BATON_CONSOLE_DIR: z
      .string()
      .optional()
      .describe(
        "The web console's build folder, served at /ui/ (default: services/console/dist of this checkout, built by pnpm install).",
      ),
    ...CONSOLE_ENV,
  })
  // The checks across variables run even when a variable failed on its own (`always`), so one start
  // lists every problem (issue #13); on such a partly parsed value a check that cannot read it is skipped.
  .refine(
    (c) => c.BATON_DEV_ISSUER_FILE !== undefined || Boolean(c.BATON_AUTH_ISSUER && c.BATON_AUTH_JWKS_URL),
    {
      message: "set BATON_AUTH_ISSUER and BATON_AUTH_JWKS_URL, or BATON_DEV_ISSUER_FILE",
      path: ["BATON_AUTH_JWKS_URL"],
      ...always,
    },
  )
  .refine(blobStoreChosen, { ...BLOB_STORE_REQUIRED, ...always })
  .superRefine((c, ctx) => {
    let problems: { path: string; message: string }[] = [];
    try {
      problems = [...authEnvProblems(c), ...consoleEnvProblems(c)];
    } catch {
      // A variable these checks read failed on its own; its problem is listed already.
    }
    for (const p of problems) ctx.addIssue({ code: "custom", path: [p.path], message: p.message });
    try {
      checkEnvIssues(c, ctx);
    } catch {
      // As above.
    }
  }, always)
  .describe(
    "Bearer tokens: set either BATON_AUTH_ISSUER and BATON_AUTH_JWKS_URL (production), or BATON_DEV_ISSUER_FILE (trials and tests); one of the two is required. File bytes: BATON_S3_BUCKET (S3) or BATON_BLOB_DIR (one host); one of the two is required.",
  );
export type GatewayEnv = z.infer<typeof GatewayConfigSchema>;

/**
 * A gateway replica's settings from its environment. Tokens are checked against the issuer's JWKS,
 * or, with `BATON_DEV_ISSUER_FILE`, against the dev issuer's key in that file (made when missing).
 */
export async function gatewaySettings(env: GatewayEnv): Promise<GatewaySettings> {
  const publicUrl = env.BATON_PUBLIC_URL.replace(/\/+$/, "");
  let auth: GatewaySettings["auth"];
  if (env.BATON_DEV_ISSUER_FILE) {
    const dev = await loadOrCreateDevIssuer(env.BATON_DEV_ISSUER_FILE);
    // Dev-issuer tokens carry today's claims, so the default claim mapping reads them.
    auth = {
      issuer: DEV_ISSUER,
      keys: { jwks: [dev.publicJwk] },
      clockToleranceSeconds: env.BATON_AUTH_CLOCK_TOLERANCE_SECONDS,
      ...(env.BATON_AUTH_AUDIENCE?.length ? { audience: env.BATON_AUTH_AUDIENCE } : {}),
    };
  } else {
    // The schema requires both when there is no dev issuer file.
    auth = bearerOptionsFromEnv(
      env,
      env.BATON_AUTH_ISSUER ?? "",
      env.BATON_AUTH_JWKS_URL ?? "",
      `${publicUrl}/mcp`,
    );
  }
  // The schema refuses a console client with the dev issuer: people paste its tokens.
  const consoleSignIn = env.BATON_DEV_ISSUER_FILE ? undefined : consoleSignInFromEnv(env);
  return {
    host: env.BATON_HOST,
    port: env.BATON_PORT,
    auth,
    secret: env.BATON_SECRET,
    publicUrl,
    partitions: env.BATON_PARTITIONS,
    leaseSeconds: env.BATON_LEASE_SECONDS,
    runDataBytes: env.BATON_RUN_DATA_BYTES,
    maxUploadBytes: env.BATON_MAX_UPLOAD_BYTES,
    callTimeoutMs: env.BATON_CALL_TIMEOUT_MS,
    attemptMs: env.BATON_ATTEMPT_TIMEOUT_MS,
    fileUrlSeconds: env.BATON_FILE_URL_SECONDS,
    version: "0.1.0",
    ...(env.BATON_CONSOLE_DIR !== undefined ? { consoleDir: env.BATON_CONSOLE_DIR } : {}),
    ...(consoleSignIn ? { consoleSignIn } : {}),
    ...(env.BATON_SECRET_PREVIOUS ? { previousSecrets: env.BATON_SECRET_PREVIOUS } : {}),
    ...(env.BATON_ALLOWED_ORIGINS ? { allowedOrigins: env.BATON_ALLOWED_ORIGINS } : {}),
    rateLimits: rateLimitsFromEnv(env),
    check: checkSettings(env),
    // Shared by every replica through Redis when REDIS_URL is set; per replica in memory otherwise.
    ...(env.REDIS_URL ? { rateLimitRedis: { url: env.REDIS_URL, namespace: env.BATON_NAMESPACE } } : {}),
  };
}
