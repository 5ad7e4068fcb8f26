import { type BearerVerifier, ClaimTokens, FileUrls, runIdFor, type SecretRing } from "@baton/auth";
import type { BlobStore } from "@baton/blob";
import type { Bus } from "@baton/bus";
import { type CheckSettings, NO_EVALUATOR } from "@baton/check";
import type { Clock } from "@baton/clock";
import { DEFAULT_ATTEMPT_MS, type Logger } from "@baton/kit";
import { DEFAULTS, OFFERED_TOOLS, offeredProfiles } from "@baton/protocol";
import type { FastifyInstance } from "fastify";
import { type ConsoleSignIn, DEFAULT_CONSOLE_DIR } from "./console.ts";
import { createFileLinks } from "./file-links.ts";
import { createHttpServer } from "./http.ts";
import { createRateLimiter, DEFAULT_RATE_LIMITS, type RateLimiter, type RateLimits } from "./rate-limit.ts";
import { createToolRouter } from "./tools.ts";

/** Everything the gateway needs, in both deployments. */
export interface GatewayOptions {
  bus: Bus;
  clock: Clock;
  log: Logger;
  blobs: BlobStore;
  verifier: BearerVerifier;
  /** The server secret: signs claim tokens and file URLs, derives run ids. */
  secret: string;
  /** Retired secrets still accepted when verifying claim tokens and file URLs (issue #12 rotation). */
  previousSecrets?: readonly string[];
  publicUrl: string;
  issuer: string;
  partitions: number;
  leaseSeconds: number;
  runDataBytes: number;
  maxUploadBytes: number;
  callTimeoutMs: number;
  /** One attempt of a call that is safe to send again, ms (default {@link DEFAULT_ATTEMPT_MS}). */
  attemptMs?: number;
  version: string;
  /** Lifetime of a file `url` in run data, seconds (default 15 minutes, `DEFAULTS.fileUrlTtlMs`). */
  fileUrlSeconds?: number;
  /** The web console's build folder (default: this repository's `services/console/dist`). */
  consoleDir?: string;
  /**
   * The console's OIDC sign-in at `issuer` (`BATON_CONSOLE_CLIENT_ID`…, issue #16); without it the
   * console takes a pasted bearer token.
   */
  consoleSignIn?: ConsoleSignIn;
  /** Browser origins allowed on `/mcp` and `/api` (default: the public URL's; issue #12). */
  allowedOrigins?: readonly string[];
  /**
   * Rate limits per caller and organization (issue #12); closed with the gateway. Default: in
   * memory, with `rateLimits` (default {@link DEFAULT_RATE_LIMITS}), as `baton dev` runs.
   */
  rateLimiter?: RateLimiter;
  rateLimits?: RateLimits;
  /**
   * The check profile's environment (`BATON_CHECK_*`, check.md §5): `check-1` is in
   * `describe.profiles` only while an evaluator is configured; the limits go to `describe.limits`.
   * Default: no evaluator, the server defaults.
   */
  check?: CheckSettings;
  /**
   * Answer a plain `tools/call` without the MCP SDK's transport and server (default true; issue
   * #15). False sends every request through the SDK, for the tests that compare the two paths.
   */
  directCalls?: boolean;
}

/**
 * Builds the stateless gateway once (ARCHITECTURE rule 8): tool router, MCP server and HTTP routes.
 * The caller listens and closes.
 */
export async function createGateway(o: GatewayOptions): Promise<FastifyInstance> {
  const ring: SecretRing = [o.secret, ...(o.previousSecrets ?? [])];
  const fileUrls = new FileUrls(
    ring,
    o.publicUrl,
    o.fileUrlSeconds !== undefined ? o.fileUrlSeconds * 1000 : DEFAULTS.fileUrlTtlMs,
  );
  const attemptMs = o.attemptMs ?? DEFAULT_ATTEMPT_MS;
  const fileLinks = createFileLinks({
    bus: o.bus,
    clock: o.clock,
    log: o.log,
    blobs: o.blobs,
    fileUrls,
    urlSeconds: o.fileUrlSeconds ?? DEFAULTS.fileUrlTtlMs / 1000,
    // A read that found its run should not wait long on the names of its files: without them the
    // gateway's own links stand in.
    callTimeoutMs: Math.min(o.callTimeoutMs, 3_000),
    attemptMs: Math.min(attemptMs, 1_500),
  });
  const tools = createToolRouter({
    bus: o.bus,
    clock: o.clock,
    log: o.log,
    blobs: o.blobs,
    tokens: new ClaimTokens(ring),
    fileLinks,
    settings: {
      partitions: o.partitions,
      leaseSeconds: o.leaseSeconds,
      runDataBytes: o.runDataBytes,
      maxUploadBytes: o.maxUploadBytes,
      tools: OFFERED_TOOLS,
      profiles: offeredProfiles((o.check ?? NO_EVALUATOR).evaluator !== null),
      checkLimits: (o.check ?? NO_EVALUATOR).limits,
      callTimeoutMs: o.callTimeoutMs,
      attemptMs,
      runIdFor: (org, requestId) => runIdFor(o.secret, org, requestId),
    },
  });
  return createHttpServer({
    bus: o.bus,
    clock: o.clock,
    log: o.log,
    blobs: o.blobs,
    verifier: o.verifier,
    fileUrls,
    fileLinks,
    tools,
    limiter:
      o.rateLimiter ??
      createRateLimiter({ limits: o.rateLimits ?? DEFAULT_RATE_LIMITS, namespace: "baton", log: o.log }),
    settings: {
      publicUrl: o.publicUrl,
      issuer: o.issuer,
      // base64 grows bytes by 4/3; leave room for the JSON-RPC envelope.
      bodyLimit: Math.ceil((o.maxUploadBytes * 4) / 3) + 256 * 1024,
      callTimeoutMs: o.callTimeoutMs,
      attemptMs,
      urlSeconds: o.fileUrlSeconds ?? DEFAULTS.fileUrlTtlMs / 1000,
      version: o.version,
      consoleDir: o.consoleDir ?? DEFAULT_CONSOLE_DIR,
      ...(o.consoleSignIn ? { consoleSignIn: o.consoleSignIn } : {}),
      ...(o.allowedOrigins ? { allowedOrigins: o.allowedOrigins } : {}),
      directCalls: o.directCalls ?? true,
    },
  });
}
