import { bearerOptionsFromEnv, createBearerVerifier, DEV_ISSUER, loadOrCreateDevIssuer } from "@baton/auth";
import { openBlobStore } from "@baton/blob";
import { clockFor, NatsBus, parseEnv, untilSignal } from "@baton/bus";
import pino from "pino";
import { GatewayConfigSchema } from "./config.ts";
import { createGateway } from "./gateway.ts";
import { closeGracefully } from "./http.ts";
import { createRateLimiter, rateLimitsFromEnv } from "./rate-limit.ts";

/** `baton serve gateway`: one stateless gateway replica. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseEnv(GatewayConfigSchema, env, "gateway");
  const log = pino({ name: "gateway", level: config.BATON_LOG_LEVEL });
  const publicUrl = config.BATON_PUBLIC_URL.replace(/\/+$/, "");
  let issuer: string;
  let verifier: ReturnType<typeof createBearerVerifier>;
  if (config.BATON_DEV_ISSUER_FILE) {
    const dev = await loadOrCreateDevIssuer(config.BATON_DEV_ISSUER_FILE);
    issuer = DEV_ISSUER;
    // Dev-issuer tokens carry today's claims, so the default claim mapping reads them.
    verifier = createBearerVerifier({
      issuer,
      audience: config.BATON_AUTH_AUDIENCE?.length ? config.BATON_AUTH_AUDIENCE : `${publicUrl}/mcp`,
      keys: { jwks: [dev.publicJwk] },
      clockToleranceSeconds: config.BATON_AUTH_CLOCK_TOLERANCE_SECONDS,
    });
  } else {
    issuer = config.BATON_AUTH_ISSUER as string;
    verifier = createBearerVerifier(
      bearerOptionsFromEnv(config, issuer, config.BATON_AUTH_JWKS_URL as string, `${publicUrl}/mcp`),
    );
  }
  // S3 when BATON_S3_BUCKET is set, else BATON_BLOB_DIR; a store that does not answer stops the start.
  const blobs = await openBlobStore(config).catch((error: Error) => {
    process.stderr.write(`baton serve gateway: ${error.message}\n`);
    return process.exit(1);
  });
  const bus = await NatsBus.connect(config.NATS_URL, "baton-gateway", config.BATON_NAMESPACE, log);
  const { clock } = await clockFor(config.BATON_CLOCK, bus);
  const app = await createGateway({
    bus,
    clock,
    log,
    blobs,
    fileUrlSeconds: config.BATON_FILE_URL_SECONDS,
    verifier,
    secret: config.BATON_SECRET,
    ...(config.BATON_SECRET_PREVIOUS ? { previousSecrets: config.BATON_SECRET_PREVIOUS } : {}),
    publicUrl,
    issuer,
    partitions: config.BATON_PARTITIONS,
    leaseSeconds: config.BATON_LEASE_SECONDS,
    runDataBytes: config.BATON_RUN_DATA_BYTES,
    maxUploadBytes: config.BATON_MAX_UPLOAD_BYTES,
    callTimeoutMs: config.BATON_CALL_TIMEOUT_MS,
    attemptMs: config.BATON_ATTEMPT_TIMEOUT_MS,
    version: "0.1.0",
    ...(config.BATON_CONSOLE_DIR !== undefined ? { consoleDir: config.BATON_CONSOLE_DIR } : {}),
    ...(config.BATON_ALLOWED_ORIGINS ? { allowedOrigins: config.BATON_ALLOWED_ORIGINS } : {}),
    // Shared by every replica through Redis when REDIS_URL is set; per replica in memory otherwise.
    rateLimiter: createRateLimiter({
      limits: rateLimitsFromEnv(config),
      namespace: config.BATON_NAMESPACE,
      log,
      ...(config.REDIS_URL ? { redisUrl: config.REDIS_URL } : {}),
    }),
  });
  await app.listen({ host: config.BATON_HOST, port: config.BATON_PORT });
  log.info({ url: `${publicUrl}/mcp` }, "gateway serving");
  await untilSignal();
  // Requests in flight get their answer: a call may wait up to its own timeout.
  await closeGracefully(app, config.BATON_CALL_TIMEOUT_MS + 1_000);
  await bus.close();
}
