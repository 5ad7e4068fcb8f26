import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { silentLogger } from "@baton/kit";
import type { Identity, ToolResult } from "@baton/protocol";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpEndpoint, type ToolHandler } from "../src/mcp.ts";

/**
 * The gate between callers and the one MCP server the gateway shares (issue 8 part 1: anything a
 * client sends that refers to a request is resolved within that client's own HTTP request). The
 * endpoint is served over real HTTP to the real MCP SDK client; its tool handler holds a call until
 * the test lets it go, so the call is in flight, deterministically, while other HTTP requests name it
 * by every id it could have: `m1…`, the gateway's own numbering, included. The whole gateway, in both
 * deployments, is tested the same way in `test/e2e/cancellation.test.ts`.
 */
describe("MCP endpoint: no reference reaches another caller's call (issue 8)", () => {
  let server: Server;
  let url: string;
  let endpoint: McpEndpoint;
  /** Resolves the held call's answer; set when the call reaches the tool handler. */
  let release: (() => void) | undefined;
  let entered: Promise<void>;
  let enter: () => void;

  const answer: ToolResult<unknown> = { ok: true, data: { held: "and answered" } };
  const handler: ToolHandler = {
    tools: [{ name: "hold", description: "Answers when the test says so.", inputSchema: { type: "object" } }],
    has: (name) => name === "hold",
    call: () =>
      new Promise((resolve) => {
        release = () => resolve(answer);
        enter();
      }),
  };

  beforeAll(async () => {
    endpoint = new McpEndpoint(handler, { name: "gate-test", version: "0" }, silentLogger);
    await endpoint.start();
    server = createServer((req, res) => {
      // As the gateway: stateless, so no GET stream and no DELETE of a session.
      if (req.method !== "POST") {
        res.writeHead(405, { allow: "POST" }).end();
        return;
      }
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        // Who calls is taken from a header: authentication is not what this test is about.
        const who: Identity = {
          org: String(req.headers["x-org"] ?? "default"),
          kind: "agent",
          id: String(req.headers["x-agent"] ?? "a_caller"),
          groups: [],
          operator: false,
        };
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        void endpoint.handle(req, res, {
          body,
          token: "token",
          identity: who,
          context: { problems: [], badArguments: new Map() },
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    await endpoint?.close();
    // A request left hanging (as every cancelled call was, before the gate) must not hold the close.
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const post = async (message: unknown, who: { org: string; agent: string }) => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "x-org": who.org,
        "x-agent": who.agent,
      },
      body: JSON.stringify(message),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
  };

  it("a held call answers after cancellations and progress naming every id, and a tasks/cancel, from other requests", async () => {
    entered = new Promise((resolve) => {
      enter = resolve;
    });
    const client = new Client({ name: "victim", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const call = client.callTool({ name: "hold", arguments: {}, _meta: { progressToken: 1 } });
    await entered;

    const ids: (string | number)[] = [];
    for (let i = 0; i <= 50; i++) ids.push(`m${i}`, i, String(i));
    for (const who of [
      { org: "other", agent: "a_intruder" },
      { org: "default", agent: "a_neighbour" },
      { org: "default", agent: "a_caller" },
    ]) {
      for (const id of ids) {
        for (const message of [
          { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } },
          { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: id, progress: 1 } },
        ]) {
          expect(await post(message, who)).toEqual({ status: 202, body: null });
        }
      }
      // A request that the SDK resolves by id in its own shared maps, were it served.
      const tasksCancel = await post(
        { jsonrpc: "2.0", id: 9, method: "tasks/cancel", params: { taskId: "m2" } },
        who,
      );
      expect(tasksCancel.body).toEqual({
        jsonrpc: "2.0",
        id: 9,
        error: { code: -32601, message: "Method not found" },
      });
    }

    release?.();
    const result = await call;
    expect(result.structuredContent).toEqual(answer);
    expect(result.isError).toBe(false);
    await client.close();
  });

  it("answers only the methods it serves: ping and tools/list pass, any other request is -32601 at the edge", async () => {
    const who = { org: "default", agent: "a_caller" };
    expect(await post({ jsonrpc: "2.0", id: "p", method: "ping" }, who)).toEqual({
      status: 200,
      body: { jsonrpc: "2.0", id: "p", result: {} },
    });
    const listed = await post({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: {} } }, who);
    expect(listed.body).toMatchObject({ id: 3, result: { tools: [{ name: "hold" }] } });
    for (const method of ["tasks/get", "tasks/list", "logging/setLevel", "resources/list", "sampling/x"]) {
      expect((await post({ jsonrpc: "2.0", id: 4, method, params: {} }, who)).body).toEqual({
        jsonrpc: "2.0",
        id: 4,
        error: { code: -32601, message: "Method not found" },
      });
    }
  });
});
