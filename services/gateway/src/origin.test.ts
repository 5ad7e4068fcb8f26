import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postMcp, testGateway, testIssuer } from "../test/gateway-harness.ts";
import { allowedOrigins } from "./origin.ts";

/**
 * Issue #12, MCP transport security (Streamable HTTP: "Servers MUST validate the Origin header on
 * all incoming connections to prevent DNS rebinding attacks"): the whole gateway, without a socket.
 */

const PUBLIC_URL = "https://baton.example.com";
let app: FastifyInstance;
let token: string;

async function gateway(publicUrl: string, origins?: string[]): Promise<FastifyInstance> {
  const issuer = await testIssuer(publicUrl);
  token = await issuer.sign("a_one", { org: "default", kind: "agent" });
  return testGateway({
    publicUrl,
    verifier: issuer.verifier,
    ...(origins ? { allowedOrigins: origins } : {}),
  });
}

beforeAll(async () => {
  app = await gateway(PUBLIC_URL);
});
afterAll(async () => {
  await app?.close();
});

function describeCall(origin?: string, target = app) {
  return postMcp(
    target,
    token,
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "describe", arguments: {} } },
    origin !== undefined ? { origin } : {},
  );
}

describe("Origin on /mcp and /api (issue #12: DNS-rebinding defence)", () => {
  it("no Origin (a server-side client) and the public URL's own origin are served", async () => {
    expect((await describeCall()).statusCode).toBe(200);
    expect((await describeCall("https://baton.example.com")).statusCode).toBe(200);
    expect((await describeCall("https://baton.example.com:443")).statusCode).toBe(200);
  });

  it("another site, a rebound name, another scheme or port, and Origin: null get 403 before the token is read", async () => {
    for (const origin of [
      "https://evil.example",
      "http://baton.example.com",
      "https://baton.example.com:8443",
      "http://127.0.0.1:7800",
      "null",
      "not a url",
    ]) {
      const response = await describeCall(origin);
      expect(response.statusCode, origin).toBe(403);
      expect(response.json(), origin).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message: `the Origin ${JSON.stringify(origin)} is not allowed to call this server (DNS-rebinding defence); allowed: https://baton.example.com (BATON_ALLOWED_ORIGINS)`,
        },
      });
    }
    // Refused before authentication: no token needed to be turned away, and none helps.
    const anonymous = await app.inject({
      method: "POST",
      url: "/mcp",
      headers: { origin: "https://evil.example" },
    });
    expect(anonymous.statusCode).toBe(403);
  });

  it("the admin API answers in the protocol's error shape; the console's static files are not checked", async () => {
    const response = await app.inject({
      method: "GET",
      url: "/api/clock",
      headers: { authorization: `Bearer ${token}`, origin: "https://evil.example" },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ ok: false, error: { code: "forbidden" } });
    const health = await app.inject({
      method: "GET",
      url: "/healthz",
      headers: { origin: "https://evil.example" },
    });
    expect(health.statusCode).toBe(200);
  });

  it("BATON_ALLOWED_ORIGINS replaces the default; a loopback public URL allows its loopback aliases", async () => {
    const configured = await gateway(PUBLIC_URL, ["https://console.example.com"]);
    try {
      expect((await describeCall("https://console.example.com", configured)).statusCode).toBe(200);
      expect((await describeCall("https://baton.example.com", configured)).statusCode).toBe(403);
    } finally {
      await configured.close();
    }
    expect([...allowedOrigins("http://127.0.0.1:7800")]).toEqual([
      "http://127.0.0.1:7800",
      "http://localhost:7800",
      "http://[::1]:7800",
    ]);
  });
});
