import { InProcessBus, SUBJECTS } from "@baton/bus";
import { silentLogger } from "@baton/kit";
import type { Identity } from "@baton/protocol";
import { describe, expect, it } from "vitest";
import { postMcp, testGateway, testIssuer } from "../test/gateway-harness.ts";
import { createRateLimiter, DEFAULT_RATE_LIMITS, limitedMessage, type RateLimits } from "./rate-limit.ts";

/**
 * Issue #12 rate limits, in memory as `baton dev` counts them: per caller and per organization,
 * writes and reads apart. Shared counting through Redis and serving while Redis is down are in
 * `test/integration/rate-limits.test.ts`.
 */

const agent = (id: string, org = "acme"): Identity => ({
  org,
  kind: "agent",
  id,
  groups: [],
  operator: false,
});

function limiter(limits: Partial<RateLimits>) {
  return createRateLimiter({
    limits: { ...DEFAULT_RATE_LIMITS, ...limits },
    namespace: `unit-${Math.random()}`,
    log: silentLogger,
  });
}

describe("rate limits in memory (issue #12)", () => {
  it("a caller's writes are limited apart from its reads, and apart from other callers'", async () => {
    const rl = limiter({ principalWrites: 2, principalReads: 3 });
    expect(await rl.take(agent("a"), "write")).toBeNull();
    expect(await rl.take(agent("a"), "write")).toBeNull();
    const limited = await rl.take(agent("a"), "write");
    expect(limited).toMatchObject({ scope: "caller", kind: "write" });
    expect(limited?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(limited?.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(await rl.take(agent("a"), "read")).toBeNull();
    expect(await rl.take(agent("b"), "write")).toBeNull();
    // The same id in another organization is another caller.
    expect(await rl.take(agent("a", "other"), "write")).toBeNull();
    await rl.close();
  });

  it("an organization's callers share its limit; another organization's do not", async () => {
    const rl = limiter({ organizationReads: 3 });
    for (const id of ["a", "b", "c"]) expect(await rl.take(agent(id), "read")).toBeNull();
    expect(await rl.take(agent("d"), "read")).toMatchObject({ scope: "organization", kind: "read" });
    expect(await rl.take(agent("d", "globex"), "read")).toBeNull();
    await rl.close();
  });

  it("0 switches a limit off", async () => {
    const rl = limiter({ principalWrites: 0, organizationWrites: 0 });
    for (let i = 0; i < 50; i++) expect(await rl.take(agent("a"), "write")).toBeNull();
    await rl.close();
  });

  it("the refusal says whose limit, which calls, and how long to wait", () => {
    expect(limitedMessage({ scope: "caller", kind: "write", retryAfterSeconds: 12 })).toBe(
      "this caller's limit of write calls is reached; retry in 12 s (rate limit)",
    );
  });
});

describe("rate limits through the gateway (issue #12)", () => {
  it("a tool call over the limit is retry with Retry-After; other MCP requests and the admin API get 429", async () => {
    const publicUrl = "http://gateway.test";
    const issuer = await testIssuer(publicUrl);
    const token = await issuer.sign("ops@example.com", {
      org: "default",
      kind: "person",
      roles: ["operator"],
    });
    const bus = new InProcessBus();
    bus.serve(SUBJECTS.scheduler, async () => ({
      ok: true,
      data: { now: "2026-01-01T00:00:00.000Z", manual: false },
    }));
    const app = await testGateway({
      bus,
      publicUrl,
      verifier: issuer.verifier,
      rateLimits: { ...DEFAULT_RATE_LIMITS, principalReads: 2 },
    });
    try {
      const mcp = (method: string, params: unknown) =>
        postMcp(app, token, { jsonrpc: "2.0", id: 7, method, params });
      expect((await mcp("tools/call", { name: "describe", arguments: {} })).statusCode).toBe(200);
      expect(
        (
          await app.inject({
            method: "GET",
            url: "/api/clock",
            headers: { authorization: `Bearer ${token}` },
          })
        ).statusCode,
      ).toBe(200);
      const limited = await mcp("tools/call", { name: "describe", arguments: {} });
      expect(limited.statusCode).toBe(200);
      expect(limited.headers["retry-after"]).toMatch(/^\d+$/);
      expect(limited.json()).toMatchObject({
        id: 7,
        result: { isError: true, structuredContent: { ok: false, error: { code: "retry" } } },
      });
      const list = await mcp("tools/list", {});
      expect(list.statusCode).toBe(429);
      expect(list.headers["retry-after"]).toMatch(/^\d+$/);
      const admin = await app.inject({
        method: "GET",
        url: "/api/clock",
        headers: { authorization: `Bearer ${token}` },
      });
      expect(admin.statusCode).toBe(429);
      expect(admin.json()).toMatchObject({ ok: false, error: { code: "retry" } });
    } finally {
      await app.close();
    }
  });
});
