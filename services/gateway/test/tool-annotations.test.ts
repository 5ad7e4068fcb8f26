import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../test/support/deploy.ts";
import { testGateway, testIssuer } from "./gateway-harness.ts";

/**
 * Issue #17 "Tools that declare their effects": every tool of the MCP tool list carries a `title` and
 * MCP tool annotations with every hint explicit (MCP's defaults for `destructiveHint` and
 * `openWorldHint` are true, so a missing hint would claim effects the tool does not have). What each
 * tool must declare is derived from the official material in `conformance/`, never from Baton's code:
 *
 * - the official argument schemas (`conformance/schemas/core-2/tools/<tool>.arguments.json`): a tool
 *   whose arguments have a `requestId` is a write that replays on it (§4: "Every write carries a client
 *   requestId … Repeating it with the same arguments returns the original result and changes
 *   nothing"), so `readOnlyHint: false, idempotentHint: true`; a tool without one is a read,
 *   `readOnlyHint: true` (and idempotent: a read changes nothing);
 * - the tool contracts (`conformance/tools.md`): a tool whose own contract lets the caller end a run
 *   other than at a declared finish is destructive — the sentence that says so is quoted and must be
 *   in that tool's section;
 * - `openWorldHint: false` everywhere: every tool acts only on this server's processes, runs and files.
 *
 * The list is read through the real MCP SDK client over Streamable HTTP from the gateway (the same
 * list `baton dev` and `baton serve gateway` build at start).
 */

const CONFORMANCE = fileURLToPath(new URL("../../../conformance/", import.meta.url));
const SCHEMAS = join(CONFORMANCE, "schemas/core-2/tools");

/** Each official argument schema, by tool (the file names are `<tool>.arguments.json`). */
const OFFICIAL: Record<string, { properties?: Record<string, unknown> }> = Object.fromEntries(
  readdirSync(SCHEMAS)
    .filter((f) => f.endsWith(".arguments.json"))
    .map((f) => [f.replace(/\.arguments\.json$/, ""), JSON.parse(readFileSync(join(SCHEMAS, f), "utf8"))]),
);

/** The section of tools.md that specifies `tool` (`## tool` up to the next `## `). */
function contractOf(tool: string): string {
  const text = readFileSync(join(CONFORMANCE, "tools.md"), "utf8");
  const start = text.indexOf(`\n## ${tool}\n`);
  if (start < 0) throw new Error(`tools.md has no section ${tool}`);
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/**
 * The tools whose contract lets the caller end a run by choice, with the words of tools.md that say
 * so: `cancel` ends it cancelled (§3.5), `decide` may end it `failed` (§3.4: "any | failed with note
 * | The run ends failed") or `rejected` (an approval without `on_reject`).
 */
const ENDS_A_RUN: Record<string, string> = {
  cancel: 'Result: the run view with `state: "cancelled"`',
  decide: "| `failed` | any | `note` |",
};

describe("tool annotations through a real MCP client (issue #17 deliver 3)", () => {
  let app: FastifyInstance;
  let client: Client;
  let tools: Tool[];

  beforeAll(async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const issuer = await testIssuer(publicUrl);
    app = await testGateway({ publicUrl, verifier: issuer.verifier });
    await app.listen({ port, host: "127.0.0.1" });
    const token = await issuer.sign("a_gate", { org: "default", kind: "agent", groups: [], roles: [] });
    client = new Client({ name: "annotations-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${publicUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    tools = (await client.listTools()).tools;
  });
  afterAll(async () => {
    await client?.close();
    await app?.close();
  });

  it("lists exactly the tools the official schemas define, 14 of them (§4.1, §4.2)", () => {
    expect(Object.keys(OFFICIAL)).toHaveLength(14);
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(OFFICIAL).sort());
  });

  it("every tool has a title and sets all four hints explicitly", () => {
    for (const tool of tools) {
      expect(tool.title, tool.name).toMatch(/\S/);
      expect(tool.annotations?.title, tool.name).toBe(tool.title);
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const)
        expect(typeof tool.annotations?.[hint], `${tool.name}.${hint}`).toBe("boolean");
    }
    expect(new Set(tools.map((t) => t.title)).size).toBe(tools.length);
  });

  it("each tool declares the effects its official schema and contract give it (§4, §3.4, §3.5)", () => {
    for (const [tool, quote] of Object.entries(ENDS_A_RUN)) expect(contractOf(tool), tool).toContain(quote);
    const rows = tools.map((tool) => {
      const replays = "requestId" in (OFFICIAL[tool.name]?.properties ?? {});
      return {
        name: tool.name,
        declared: {
          readOnlyHint: tool.annotations?.readOnlyHint,
          destructiveHint: tool.annotations?.destructiveHint,
          idempotentHint: tool.annotations?.idempotentHint,
          openWorldHint: tool.annotations?.openWorldHint,
        },
        expected: {
          readOnlyHint: !replays,
          destructiveHint: tool.name in ENDS_A_RUN,
          idempotentHint: true,
          openWorldHint: false,
        },
      };
    });
    for (const row of rows) expect(row.declared, row.name).toEqual(row.expected);
    // The derivation itself: five reads, nine writes that replay, two of them destructive.
    expect(rows.filter((r) => r.expected.readOnlyHint).map((r) => r.name)).toEqual(
      expect.arrayContaining(["describe", "list_processes", "get_run", "get_work", "list_runs"]),
    );
    expect(rows.filter((r) => !r.expected.readOnlyHint)).toHaveLength(9);
    expect(rows.filter((r) => r.expected.destructiveHint).map((r) => r.name)).toEqual(
      expect.arrayContaining(["cancel", "decide"]),
    );
  });
});
