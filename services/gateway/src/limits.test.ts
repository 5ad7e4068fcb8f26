import { InProcessBus, SUBJECTS } from "@baton/bus";
import { DEFAULTS } from "@baton/protocol";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postMcp, testGateway, testIssuer } from "../test/gateway-harness.ts";
import { argumentProblems, parseBody } from "./body.ts";
import {
  callLimitProblems,
  MAX_ADMIN_BODY_BYTES,
  MAX_EVIDENCE_ITEMS,
  MAX_FIELDS,
  MAX_ID_CHARS,
  MAX_KEY_CHARS,
} from "./limits.ts";

/**
 * Issue #12 "Limits on everything a caller sends": each limit refuses with `invalid` and an issue
 * naming the argument and the limit, before anything crosses the bus (never `retry`, §4.3). The
 * whole gateway without a socket; the services behind the bus answer every call `ok`, so a limit
 * that did not hold would show as a success.
 */

const PUBLIC_URL = "http://gateway.test";
const x = (n: number) => "x".repeat(n);
let app: FastifyInstance;
let token: string;
const crossed: string[] = [];

beforeAll(async () => {
  const issuer = await testIssuer(PUBLIC_URL);
  token = await issuer.sign("ops@example.com", {
    org: "default",
    kind: "person",
    groups: [],
    roles: ["operator"],
  });
  const bus = new InProcessBus();
  for (const subject of [SUBJECTS.registry, SUBJECTS.engineRead, ...[0, 1, 2, 3].map(SUBJECTS.engineWrite)]) {
    bus.serve(subject, async (envelope) => {
      crossed.push(envelope.type);
      return { ok: true, data: {} };
    });
  }
  app = await testGateway({ bus, publicUrl: PUBLIC_URL, verifier: issuer.verifier });
});
afterAll(async () => {
  await app?.close();
});

async function call(name: string, args: Record<string, unknown>) {
  const response = await postMcp(app, token, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: args },
  });
  expect(response.statusCode).toBe(200);
  return response.json().result.structuredContent as {
    ok: boolean;
    error?: { code: string; issues?: string[] };
  };
}

describe("limits on what a caller sends (issue #12)", () => {
  it("id-like arguments: at most 1024 characters", async () => {
    expect(callLimitProblems("get_run", { runId: x(MAX_ID_CHARS) }, 100, DEFAULTS.runDataBytes)).toEqual([]);
    const before = crossed.length;
    const result = await call("claim", { runId: x(MAX_ID_CHARS + 1), stepId: "s", requestId: "r" });
    expect(result.error).toMatchObject({
      code: "invalid",
      issues: ["runId: at most 1024 characters (server limit)"],
    });
    expect(crossed.length).toBe(before);
    expect((await call("get_run", { runId: x(MAX_ID_CHARS) })).ok).toBe(true);
  });

  it("evidence: at most 100 items, each ref at most 1024 characters", async () => {
    const evidence = Array.from({ length: MAX_EVIDENCE_ITEMS + 1 }, () => ({
      kind: "link",
      ref: "https://x",
    }));
    const many = await call("submit", { token: "t", output: {}, summary: "s", evidence, requestId: "r" });
    expect(many.error?.issues).toContain("evidence: at most 100 items (server limit)");
    const long = await call("decide", {
      runId: "r",
      workItemId: "w",
      snapshot: "s",
      decision: "completed",
      evidence: [{ kind: "link", ref: x(MAX_ID_CHARS + 1) }],
      requestId: "r",
    });
    expect(long.error?.issues).toEqual(["evidence[0].ref: at most 1024 characters (server limit)"]);
    // Found by the long campaign: limits are read before the schema's verdict, so any item must do.
    const odd = await call("submit", {
      token: "t",
      output: {},
      summary: "s",
      evidence: [null, 1, "x"],
      requestId: "r",
    });
    expect(odd.error?.code).toBe("invalid");
    expect(odd.error?.issues).toEqual([
      "evidence[0]: expected object, got null",
      "evidence[1]: expected object, got number",
      "evidence[2]: expected object, got string",
    ]);
  });

  it("objects: at most 1000 fields, keys at most 1024 characters, at any depth", async () => {
    const wide = Object.fromEntries(Array.from({ length: MAX_FIELDS + 1 }, (_, i) => [`f${i}`, i]));
    const result = await call("start_run", { process: "p", inputs: { nested: wide }, requestId: "r" });
    expect(result.error?.issues).toEqual([`inputs.nested: at most ${MAX_FIELDS} fields (server limit)`]);
    const key = x(MAX_KEY_CHARS + 1);
    expect(
      argumentProblems(parseBody(JSON.stringify({ params: { arguments: { data: { [key]: 1 } } } }))),
    ).toEqual([
      {
        path: `data.${x(40)}…`,
        problem: `key of ${MAX_KEY_CHARS + 1} characters; at most 1024 (server limit)`,
      },
    ]);
  });

  it("a call's body: at most twice limits.runDataBytes for every tool but upload", async () => {
    const before = crossed.length;
    const result = await call("send_event", {
      runId: "r",
      name: "n",
      data: { text: x(2 * DEFAULTS.runDataBytes) },
      requestId: "r",
    });
    expect(result.error?.code).toBe("invalid");
    expect(result.error?.issues?.[0]).toMatch(
      /^arguments: \d+ bytes, over the 524288 bytes a send_event call may carry \(twice describe\.limits\.runDataBytes; server limit\)$/,
    );
    expect(crossed.length).toBe(before);
  });

  it("an admin API body: at most 512 KiB (a PROCESS.md source travels in one bus message)", async () => {
    const response = await app.inject({
      method: "POST",
      url: "/api/processes",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      payload: { folderName: "big", source: x(MAX_ADMIN_BODY_BYTES) },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({
      ok: false,
      error: { code: "invalid", issues: ["body: at most 524288 bytes; a PROCESS.md source must fit"] },
    });
  });
});
