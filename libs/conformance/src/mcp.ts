import { randomUUID } from "node:crypto";
import { NEW_REQUEST_ID, type ToolName, type ToolResult } from "@baton/protocol";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect } from "vitest";
import { schemaProblems } from "./schemas.ts";

/**
 * Identity ids as a test names them and as the server knows them: `toServer` maps a string the test
 * sends (unchanged when it is no id the translation knows), `fromServer` a string the server answers.
 */
export interface IdTranslation {
  toServer(value: string): string;
  fromServer(value: string): string;
}

/** `value` with every string in it (object keys aside) passed through `map`. */
function mapStrings(value: unknown, map: (s: string) => string): unknown {
  if (typeof value === "string") return map(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, map));
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, map)]));
  return value;
}

/** A result whose `data` the test reads freely. */
// biome-ignore lint/suspicious/noExplicitAny: tests read response shapes dynamically
export type Result = ToolResult<any>;

/**
 * Asserts a refused result with error `code` (and exactly `issues`, when given) and returns its error,
 * for the assertions a test adds; the one protocol-error check every suite uses (§4.3).
 */
// biome-ignore lint/suspicious/noExplicitAny: tests read the error's fields freely
export function refused(result: Result, code: string, issues?: string[]): any {
  expect(result.ok, `expected ${code}, got ${JSON.stringify(result).slice(0, 400)}`).toBe(false);
  if (result.ok) return null;
  expect(result.error.code, JSON.stringify(result.error)).toBe(code);
  if (issues) expect(result.error.issues).toEqual(issues);
  return result.error;
}

/**
 * A real MCP SDK client over Streamable HTTP with a bearer token. Every response is validated against
 * the official JSON Schemas; a response that does not validate fails the test at once.
 */
export class McpSession {
  private constructor(
    private readonly client: Client,
    readonly label: string,
    private readonly names: IdTranslation | null,
  ) {}

  /**
   * Connects with a bearer token. `names`, when given, translates identity ids between the test's
   * own and the server's (the runner's `--tokens`): applied to the arguments sent and, after the
   * schema check, to the answer read.
   */
  static async connect(
    url: string,
    token: string,
    label: string,
    names: IdTranslation | null = null,
  ): Promise<McpSession> {
    const client = new Client({ name: `baton-test-${label}`, version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return new McpSession(client, label, names);
  }

  /** The server's name from the MCP handshake (`serverInfo.name`; Baton says `baton`). */
  serverName(): string | undefined {
    return this.client.getServerVersion()?.name;
  }

  /** The MCP tool list. */
  async tools() {
    return (await this.client.listTools()).tools;
  }

  /**
   * Calls a tool and returns `{ ok, data | error }` from `structuredContent`, schema-checked. A `retry`
   * answer (the server could not finish in time, §4.3) is resent with the same arguments and so the same
   * `requestId`, as the protocol tells a client to, for up to 60 s: a busy machine is not a failure.
   */
  async call(tool: ToolName, args: Record<string, unknown> = {}): Promise<Result> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const result = await this.callOnce(tool, args);
      if (result.ok || result.error.code !== "retry" || Date.now() > deadline) return result;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Calls a tool once and returns its first answer, `retry` included: for tests of what a call
   * answers, where resending a `retry` would hide the answer under test (§4.3), such as a blip
   * answering `retry` within the call deadline (issue #8).
   */
  async callOnce(tool: ToolName, args: Record<string, unknown>): Promise<Result> {
    const sent = this.names ? (mapStrings(args, this.names.toServer) as Record<string, unknown>) : args;
    const response = await this.client.callTool({ name: tool, arguments: sent });
    const structured = response.structuredContent as Result | undefined;
    if (!structured) throw new Error(`${tool}: no structuredContent`);
    const text = (response.content as { type: string; text: string }[])[0]?.text;
    if (text === undefined || JSON.stringify(JSON.parse(text)) !== JSON.stringify(structured)) {
      throw new Error(`${tool}: the JSON text content differs from structuredContent`);
    }
    if (response.isError !== !structured.ok)
      throw new Error(`${tool}: isError ${response.isError} but ok ${structured.ok}`);
    const problems = schemaProblems(tool, structured);
    if (problems.length > 0) {
      throw new Error(
        `${tool} response breaks the official schema:\n  ${problems.join("\n  ")}\n${JSON.stringify(structured).slice(0, 2000)}`,
      );
    }
    return this.names ? (mapStrings(structured, this.names.fromServer) as Result) : structured;
  }

  /**
   * Calls a write tool with a fresh `requestId` (unless one is given). The placeholder `<new UUID>`
   * that the exact calls in work items and `get_work` items carry is replaced with a fresh one, as
   * tools.md tells a client to do, so spreading `decide.arguments` or `claim.arguments` just works.
   */
  async write(tool: ToolName, args: Record<string, unknown>): Promise<Result> {
    const requestId =
      args.requestId === undefined || args.requestId === NEW_REQUEST_ID ? randomUUID() : args.requestId;
    return this.call(tool, { ...args, requestId });
  }

  /** `call`, expecting `ok: true`; returns `data`. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response shapes dynamically
  async ok(tool: ToolName, args: Record<string, unknown> = {}): Promise<any> {
    const result =
      tool === "describe" || tool.startsWith("get_") || tool.startsWith("list_")
        ? await this.call(tool, args)
        : await this.write(tool, args);
    if (!result.ok) throw new Error(`${this.label} ${tool} failed: ${JSON.stringify(result.error)}`);
    return result.data;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

/**
 * A result without its short-lived file `url`s. URLs are signed when a response is sent (§5: "a
 * short-lived url"), so a replay returns the original result with fresh URLs: compare without them.
 */
export function withoutUrls<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (key, v) => (key === "url" ? undefined : v)) as T;
}
