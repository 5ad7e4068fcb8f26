// Starting one gateway replica on the infrastructure it is given (`baton serve gateway`, `baton dev`).
import { type BearerOptions, createBearerVerifier } from "@baton/auth";
import type { BlobStore } from "@baton/blob";
import type { Bus } from "@baton/bus";
import type { Clock } from "@baton/clock";
import { type Health, type Logger, type Running, registerOpsRoutes } from "@baton/kit";
import { createGateway, type GatewayOptions } from "./gateway.ts";
import { closeGracefully } from "./http.ts";
import { createRateLimiter, DEFAULT_RATE_LIMITS } from "./rate-limit.ts";

/** How a gateway replica runs (`config.ts` reads it from the environment). */
export type GatewaySettings = Omit<
  GatewayOptions,
  "bus" | "clock" | "log" | "blobs" | "verifier" | "issuer"
> & {
  /** Address to listen on, and port (0: any free one). */
  host: string;
  port: number;
  /**
   * Who signs bearer tokens (`iss`), where their verification keys are, and how claims map to an
   * identity (issue #12); the audience defaults to `<publicUrl>/mcp`.
   */
  auth: Omit<BearerOptions, "audience"> & { audience?: BearerOptions["audience"] };
  /**
   * Redis for rate limits shared by every replica of `namespace` (issue #12); without it each replica
   * counts in memory.
   */
  rateLimitRedis?: { url: string; namespace: string };
  /**
   * `baton dev` only: `/readyz` and `/metrics` on the public port too, with this readiness (a trial
   * server on one host has no operations port). `baton serve gateway` keeps them on `BATON_OPS_PORT`.
   */
  ops?: Health;
};

/** What a gateway replica runs on: the bus to the services, and the file store uploads are written to. */
export interface GatewayInfra {
  bus: Bus;
  clock: Clock;
  log: Logger;
  blobs: BlobStore;
  /** `/readyz` (issue #13): the service adds its file store's check. */
  health?: Health;
}

/** A listening gateway: its port, and `stop()`, which answers every request in flight first. */
export interface RunningGateway extends Running {
  port: number;
}

/**
 * Builds the gateway once (ARCHITECTURE rule 8) and listens on `settings.host`/`port`. Stopping closes
 * it gracefully: requests in flight get their answer, each waiting up to its call timeout.
 */
export async function startGateway(settings: GatewaySettings, infra: GatewayInfra): Promise<RunningGateway> {
  const { host, port, auth, rateLimitRedis, ops, ...options } = settings;
  // Redis is never a readiness check: it decides no outcome (rate limits serve without it).
  infra.health?.add(infra.blobs.kind === "s3" ? "s3" : "blob_dir", () => infra.blobs.check());
  const verifier = createBearerVerifier({ ...auth, audience: auth.audience ?? `${settings.publicUrl}/mcp` });
  const rateLimiter = rateLimitRedis
    ? createRateLimiter({
        limits: options.rateLimits ?? DEFAULT_RATE_LIMITS,
        namespace: rateLimitRedis.namespace,
        log: infra.log,
        redisUrl: rateLimitRedis.url,
      })
    : options.rateLimiter;
  const app = await createGateway({
    ...options,
    ...infra,
    verifier,
    issuer: auth.issuer,
    ...(rateLimiter ? { rateLimiter } : {}),
  });
  if (ops) registerOpsRoutes(app, ops, { healthz: false });
  await app.listen({ host, port });
  const address = app.server.address();
  infra.log.info({ url: `${settings.publicUrl}/mcp` }, "gateway serving");
  return {
    port: typeof address === "object" && address ? address.port : port,
    // A call may wait up to its own timeout.
    stop: () => closeGracefully(app, settings.callTimeoutMs + 1_000),
  };
}
