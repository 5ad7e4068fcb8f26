import { createBearerVerifier, DEV_ISSUER, loadOrCreateDevIssuer } from "@baton/auth";
import { LocalBlobStore } from "@baton/blob";
import { NatsBus } from "@baton/bus";
import { clockFor } from "@baton/clock/nats";
import { createLogger, parseEnv, untilSignal } from "@baton/kit";
import { GatewayConfigSchema } from "./config.ts";
import { createGateway } from "./gateway.ts";
import { closeGracefully } from "./http.ts";

/** `baton serve gateway`: one stateless gateway replica. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseEnv(GatewayConfigSchema, env, "gateway");
  const log = createLogger("gateway", config.BATON_LOG_LEVEL);
  const publicUrl = config.BATON_PUBLIC_URL.replace(/\/+$/, "");
  let issuer: string;
  let verifier: ReturnType<typeof createBearerVerifier>;
  if (config.BATON_DEV_ISSUER_FILE) {
    const dev = await loadOrCreateDevIssuer(config.BATON_DEV_ISSUER_FILE);
    issuer = DEV_ISSUER;
    verifier = createBearerVerifier({
      issuer,
      audience: `${publicUrl}/mcp`,
      keys: { jwks: [dev.publicJwk] },
    });
  } else {
    issuer = config.BATON_AUTH_ISSUER as string;
    verifier = createBearerVerifier({
      issuer,
      audience: `${publicUrl}/mcp`,
      keys: { jwksUrl: config.BATON_AUTH_JWKS_URL as string },
    });
  }
  const bus = await NatsBus.connect(config.NATS_URL, "baton-gateway", config.BATON_NAMESPACE, log);
  const { clock } = await clockFor(config.BATON_CLOCK, bus);
  const app = await createGateway({
    bus,
    clock,
    log,
    blobs: new LocalBlobStore(config.BATON_BLOB_DIR),
    verifier,
    secret: config.BATON_SECRET,
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
  });
  await app.listen({ host: config.BATON_HOST, port: config.BATON_PORT });
  log.info({ url: `${publicUrl}/mcp` }, "gateway serving");
  await untilSignal();
  // Requests in flight get their answer: a call may wait up to its own timeout.
  await closeGracefully(app, config.BATON_CALL_TIMEOUT_MS + 1_000);
  await bus.close();
}
