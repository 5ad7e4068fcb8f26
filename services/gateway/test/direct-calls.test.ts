import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { silentLogger } from "@baton/kit";
import type { Identity, ToolResult } from "@baton/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpEndpoint, type ToolHandler } from "../src/mcp.ts";

/**
 * The direct path for a plain `tools/call` (issue #15: the JSON-RPC frame checked once, no
 * transport built per call) answers exactly what the MCP SDK's stateless transport and server
 * answer: the same status, content type and bytes, for every request the direct path takes and
 * for every one it must leave to the SDK (which refuses or answers it as the SDK does). Two
 * endpoints over real HTTP, one direct and one SDK only, get the same requests.
 */
describe("MCP endpoint: a plain tools/call answered directly is byte for byte the SDK's answer (issue #15)", () => {
  const handler: ToolHandler = {
    tools: [
      { name: "echo", description: "Answers its arguments.", inputSchema: { type: "object" } },
      { name: "refuse", description: "Refuses.", inputSchema: { type: "object" } },
      { name: "throw", description: "Throws.", inputSchema: { type: "object" } },
    ],
    has: (name) => name === "echo" || name === "refuse" || name === "throw",
    call: async (name, args, who): Promise<ToolResult<unknown>> => {
      if (name === "throw") throw new Error("the handler broke");
      if (name === "refuse")
        return { ok: false, error: { code: "not_found", message: "no run x in your organization" } };
      return { ok: true, data: { args, who: who.id, text: 'é \u2028 "quoted" </script>' } };
    },
  };
  const servers: Server[] = [];
  const endpoints: McpEndpoint[] = [];
  let direct: string;
  let sdk: string;

  async function serve(endpoint: McpEndpoint): Promise<string> {
    await endpoint.start();
    endpoints.push(endpoint);
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const who: Identity = { org: "default", kind: "agent", id: "a_direct", groups: [], operator: false };
        void endpoint.handle(req, res, {
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
          token: "token",
          identity: who,
          context: { problems: [], badArguments: new Map() },
        });
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  }

  beforeAll(async () => {
    direct = await serve(new McpEndpoint(handler, { name: "t", version: "0" }, silentLogger));
    sdk = await serve(new McpEndpoint(handler, { name: "t", version: "0" }, silentLogger, { direct: false }));
  });
  afterAll(async () => {
    for (const e of endpoints) await e.close();
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
  });

  const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

  async function both(body: unknown, headers: Record<string, string> = HEADERS) {
    const send = async (url: string) => {
      const r = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
      return { status: r.status, type: r.headers.get("content-type"), text: await r.text() };
    };
    return { direct: await send(direct), sdk: await send(sdk) };
  }

  const call = (id: unknown, name: string, args?: unknown) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: args === undefined ? { name } : { name, arguments: args },
  });

  it("takes the direct path for plain calls: string and integer ids, with or without arguments, a result, a refusal, a handler that throws", async () => {
    const plain: [unknown, Record<string, string>?][] = [
      [call("r-1", "echo", { runId: "x", nested: { list: [1, 2.5, "three", null, true] } })],
      [call(7, "echo", {})],
      [call(0, "echo")],
      [call("r-2", "refuse", { runId: "x" })],
      [call("r-3", "throw", {})],
      [call("r-4", "echo", { a: 1 }), { ...HEADERS, "content-type": "Application/JSON; charset=utf-8" }],
      [call("r-5", "echo", { a: 1 }), { ...HEADERS, "mcp-protocol-version": "2025-06-18" }],
    ];
    for (const [body, headers] of plain) {
      const before = endpoints[0]?.directCalls ?? 0;
      const answers = await both(body, headers);
      expect(answers.direct, JSON.stringify(body)).toEqual(answers.sdk);
      expect(answers.direct.status).toBe(200);
      expect(endpoints[0]?.directCalls, `direct path for ${JSON.stringify(body)}`).toBe(before + 1);
    }
    expect(endpoints[1]?.directCalls).toBe(0);
  });

  it("leaves everything else to the SDK, which answers it as before: _meta, odd ids, arguments and params, unknown tools, other methods, bad headers", async () => {
    const other: [unknown, Record<string, string>?][] = [
      [{ ...call("m", "echo", {}), params: { name: "echo", arguments: {}, _meta: { progressToken: 1 } } }],
      [{ ...call("m", "echo", {}), params: { name: "echo", arguments: {}, extra: 1 } }],
      [{ ...call("m", "echo", {}), extra: 1 }],
      [call(1.5, "echo", {})],
      [call(null, "echo", {})],
      [call("m", "echo", [1, 2])],
      [call("m", "echo", null)],
      [call("m", "echo", "text")],
      [call("m", "nope", {})],
      [{ jsonrpc: "2.0", id: "m", method: "tools/call", params: { arguments: {} } }],
      [{ jsonrpc: "2.0", id: "m", method: "tools/call" }],
      [{ jsonrpc: "1.0", id: "m", method: "tools/call", params: { name: "echo" } }],
      [{ jsonrpc: "2.0", id: "m", method: "tools/list" }],
      [{ jsonrpc: "2.0", id: "m", method: "ping" }],
      [{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "m1" } }],
      [call("m", "echo", {}), { ...HEADERS, accept: "application/json" }],
      [call("m", "echo", {}), { ...HEADERS, "content-type": "text/plain" }],
      [call("m", "echo", {}), { ...HEADERS, "mcp-protocol-version": "1999-01-01" }],
    ];
    for (const [body, headers] of other) {
      const answers = await both(body, headers);
      expect(answers.direct, JSON.stringify({ body, headers })).toEqual(answers.sdk);
    }
    // Nothing above was answered directly.
    expect(endpoints[0]?.directCalls).toBe(7);
  });
});
