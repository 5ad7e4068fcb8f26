import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type McpSession, refused } from "@baton/conformance/mcp";
import { importJWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployment, REPO, startEmbedded } from "../support/deploy.ts";

/**
 * The gateway refuses bad input with a clear error and loses nothing (the bar: "no input crashes a
 * service or leaves a half-written state"; issue #2: invalid arguments are the protocol's `invalid`,
 * never a JSON-RPC error or a 500). Cases found by the newcomer/adversarial review, kept as tests.
 */
describe("gateway robustness", () => {
  let baton: Deployment;
  let agent: McpSession;
  let token: string;

  beforeAll(async () => {
    baton = await startEmbedded();
    await baton.publish(join(REPO, "test/e2e/processes/any-object"));
    token = await baton.token({ kind: "agent", id: "a_robust" });
    agent = await baton.session({ kind: "agent", id: "a_robust" });
  });
  afterAll(async () => {
    await agent?.close();
    await baton?.stop();
  });

  const post = (
    body: string,
    headers: Record<string, string> = { "content-type": "application/json" },
    bearer = token,
  ) =>
    fetch(baton.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${bearer}`,
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body,
    });
  const toolCall = (name: string, args: unknown) =>
    JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } });

  it("refuses inputs nested deeper than 64 levels as invalid, and the server keeps serving (review finding 1)", async () => {
    const nest = (levels: number) => {
      let blob: unknown = "x";
      for (let i = 0; i < levels; i++) blob = { a: blob };
      return blob;
    };
    const r = await agent.call("start_run", {
      process: "any-object",
      inputs: { blob: nest(100) },
      requestId: crypto.randomUUID(),
    });
    const error = refused(r, "invalid");
    expect(error.issues?.[0]).toMatch(/^inputs\.blob(\.a)+: nests deeper than 64 levels/);
    // Too deep to parse at all: a JSON-RPC error that says the limit, before any recursive walker runs.
    const absurd = await post(
      toolCall("start_run", { process: "any-object", inputs: { blob: nest(2000) }, requestId: "deep" }),
    );
    expect(absurd.status).toBe(400);
    expect(await absurd.json()).toMatchObject({
      error: { code: -32600, message: expect.stringContaining("at most 64 levels") },
    });
    expect((await agent.call("get_work", {})).ok).toBe(true);
  });

  it("refuses JSON-RPC batches, so no call escapes the number and depth checks (review finding 2)", async () => {
    const response = await post(`[${toolCall("describe", {})}]`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: -32600, message: expect.stringContaining("batches") },
    });
  });

  it("answers a body that is not JSON, or not labelled JSON, with a JSON-RPC error saying what to send (review findings 4, 10)", async () => {
    for (const headers of [{ "content-type": "text/plain" }, {} as Record<string, string>]) {
      const response = await post(toolCall("describe", {}), headers);
      expect(response.status).toBe(415);
      expect(await response.json()).toMatchObject({
        jsonrpc: "2.0",
        error: { message: expect.stringContaining("application/json") },
      });
    }
    const malformed = await post('{"jsonrpc":"2.0",');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { code: -32700 } });
  });

  it("answers arguments that are not an object with invalid, and a call without a tool name with -32602 (review finding 5)", async () => {
    for (const [args, got] of [
      ["r_1", "string"],
      [[1], "array"],
      [null, "null"],
      [5, "number"],
    ] as const) {
      const response = await post(toolCall("get_run", args));
      const body = (await response.json()) as { result: { structuredContent: unknown; isError: boolean } };
      expect(body.result.isError).toBe(true);
      expect(body.result.structuredContent).toEqual({
        ok: false,
        error: {
          code: "invalid",
          message: "arguments do not match get_run; fix every issue listed",
          issues: [`arguments: expected object, got ${got}`],
        },
      });
    }
    const noName = await post(
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { arguments: {} } }),
    );
    expect(await noName.json()).toMatchObject({
      error: { code: -32602, message: "tools/call needs params.name, the tool to call" },
    });
  });

  it("bounds the issues of a refusal: 1,000 undeclared inputs give the first 200 and a count of the rest, so the answer fits one bus message (§6 rule 3)", async () => {
    const inputs: Record<string, unknown> = { blob: {} };
    for (let i = 0; i < 1000; i++) inputs[`f${i}`] = i;
    const result = await agent.call("start_run", {
      process: "any-object",
      inputs,
      requestId: crypto.randomUUID(),
    });
    const error = refused(result, "invalid");
    expect(error.issues).toHaveLength(201);
    expect(error.issues?.slice(0, 2)).toEqual(["inputs.f0: not declared", "inputs.f1: not declared"]);
    expect(error.issues?.at(-1)).toBe("… and 800 more issues; fix these first");
  });

  it("refuses a bearer token without an expiry (review finding 9)", async () => {
    const issuer = JSON.parse(readFileSync(join(baton.dataDir, "dev-issuer.json"), "utf8"));
    const key = await importJWK(issuer.privateJwk, "EdDSA");
    const forever = await new SignJWT({ org: "default", kind: "agent", groups: [], roles: [] })
      .setProtectedHeader({ alg: "EdDSA", kid: issuer.kid })
      .setSubject("a_forever")
      .setIssuer(issuer.issuer)
      .setAudience(baton.url)
      .sign(key);
    const response = await post(toolCall("describe", {}), undefined, forever);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect(await response.json()).toEqual({
      error: "invalid_token",
      error_description: "the token has no expiry (exp); an access token must expire",
    });
  });

  it("a refused token says what to fix, in the body as written and in WWW-Authenticate as RFC 6750 allows (tenancy review)", async () => {
    const issuer = JSON.parse(readFileSync(join(baton.dataDir, "dev-issuer.json"), "utf8"));
    const key = await importJWK(issuer.privateJwk, "EdDSA");
    const odd = await new SignJWT({ org: "default", kind: "système", groups: [], roles: [] })
      .setProtectedHeader({ alg: "EdDSA", kid: issuer.kid })
      .setSubject("a_odd")
      .setIssuer(issuer.issuer)
      .setAudience(baton.url)
      .setExpirationTime("1h")
      .sign(key);
    const response = await post(toolCall("describe", {}), undefined, odd);
    expect(response.status).toBe(401);
    const description = 'the token\'s claims are wrong: kind must be "agent" or "person" (got "système")';
    expect(await response.json()).toEqual({ error: "invalid_token", error_description: description });
    expect(response.headers.get("www-authenticate")).toContain(
      `error_description="the token's claims are wrong: kind must be 'agent' or 'person' (got 'syst?me')"`,
    );
  });
});
