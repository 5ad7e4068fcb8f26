// The whole gateway without a socket, for tests: one place that knows createGateway's test defaults.
import { DEV_ISSUER } from "@baton/auth";
import { LocalBlobStore } from "@baton/blob";
import { InProcessBus } from "@baton/bus";
import { systemClock } from "@baton/clock";
import { silentLogger } from "@baton/kit";
import { DEFAULTS } from "@baton/protocol";
import type { FastifyInstance } from "fastify";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { createBearerVerifier } from "../../../libs/auth/src/bearer.ts";
import { createGateway, type GatewayOptions } from "../src/gateway.ts";

/** A signing key of the dev issuer's shape (EdDSA, kid `k1`) and the verifier that trusts it. */
export interface TestIssuer {
  /** Verifies bearer tokens for `${publicUrl}/mcp`, issued by {@link DEV_ISSUER}. */
  verifier: GatewayOptions["verifier"];
  /** A bearer token for `subject` with `claims` (e.g. `{ org, kind, roles }`), valid for one hour. */
  sign(subject: string, claims: JWTPayload): Promise<string>;
}

/** A fresh {@link TestIssuer} for a gateway at `publicUrl` (no trailing slash). */
export async function testIssuer(publicUrl: string): Promise<TestIssuer> {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  return {
    verifier: createBearerVerifier({
      issuer: DEV_ISSUER,
      audience: `${publicUrl}/mcp`,
      keys: { jwks: [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "EdDSA" }] },
    }),
    sign: (subject, claims) =>
      new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "EdDSA", kid: "k1" })
        .setSubject(subject)
        .setIssuer(DEV_ISSUER)
        .setAudience(`${publicUrl}/mcp`)
        .setExpirationTime("1h")
        .sign(privateKey),
  };
}

/**
 * A gateway for `publicUrl` trusting `verifier`, with the test defaults: an in-process bus nothing
 * serves (pass `bus` to answer calls), the system clock, a silent log, a file store that is never
 * read (these tests upload nothing; pass `blobs` to watch writes), 4 partitions, the protocol's
 * defaults, 1 MiB uploads and a 5 s call deadline. Anything in `overrides` wins.
 */
export function testGateway(
  options: Pick<GatewayOptions, "publicUrl" | "verifier"> & Partial<GatewayOptions>,
): Promise<FastifyInstance> {
  return createGateway({
    bus: new InProcessBus(),
    clock: systemClock,
    log: silentLogger,
    blobs: new LocalBlobStore("/nonexistent"),
    secret: "gateway-test-secret-0123456789abcdef",
    issuer: DEV_ISSUER,
    partitions: 4,
    leaseSeconds: DEFAULTS.leaseSeconds,
    runDataBytes: DEFAULTS.runDataBytes,
    maxUploadBytes: 1024 * 1024,
    callTimeoutMs: 5_000,
    version: "test",
    ...options,
  });
}

/**
 * POSTs one JSON-RPC message (an object, or its exact text) to `app`'s `/mcp` as a Streamable HTTP
 * client does (bearer `token`, JSON in, JSON or an event stream accepted), with `headers` added
 * (e.g. `origin`). Returns Fastify's injected response; nothing is checked here.
 */
export function postMcp(
  app: FastifyInstance,
  token: string,
  payload: object | string,
  headers: Record<string, string> = {},
) {
  return app.inject({
    method: "POST",
    url: "/mcp",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    payload,
  });
}
