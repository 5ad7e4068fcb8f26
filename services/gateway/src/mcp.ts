import type { IncomingMessage, ServerResponse } from "node:http";
import { newTraceparent } from "@baton/bus";
import { inSpan, type Logger, secondsSince, toolCalls, toolDuration, tracingEnabled } from "@baton/kit";
import type { Identity, ToolResult } from "@baton/protocol";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  McpError,
  type MessageExtraInfo,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

/** What the MCP layer asks of the tool router. */
export interface ToolHandler {
  /** The tools to list, with their argument schemas (built once). */
  tools: Tool[];
  /** Calls a listed tool; returns the protocol result, never throws a protocol error. */
  call(name: string, args: unknown, who: Identity, context: CallContext): Promise<ToolResult<unknown>>;
  has(name: string): boolean;
}

/** Per-HTTP-request facts the tool call needs. */
export interface CallContext {
  /** Places under `params.arguments` that break a limit (inexact numbers, over-deep nesting). */
  problems: { path: string; problem: string }[];
  /**
   * Calls whose `params.arguments` was not an object, by the server-side request id: the call is
   * answered `invalid` (tools.md: a call whose arguments break the schema) rather than a JSON-RPC error.
   */
  badArguments: Map<string, string>;
  /**
   * Set when the call is answered without being made: a rate limit was reached (issue #12), so the
   * protocol's `retry` with the wait in its message.
   */
  refusal?: ToolResult<never>;
  /** UTF-8 bytes of the request body, for the limit on a call's size (`limits.ts`). */
  bodyBytes?: number;
  /**
   * The W3C `traceparent` the tool call's service calls carry, when spans are off (a new trace per
   * call, so its bus calls and its access line share one `trace_id`); with spans on, the tool
   * call's span is active instead and this is unset.
   */
  trace?: string;
}

/** Auth info attached to the raw request, as the SDK forwards it to handlers in `extra.authInfo`. */
interface AuthExtra {
  identity: Identity;
  context: CallContext;
}

/**
 * The MCP server, built once at start (ARCHITECTURE rule 8): one SDK `Server` with its handlers and
 * tool list, connected to one {@link SharedTransport}. Each HTTP request gets the SDK's stateless
 * Streamable HTTP transport (which handles the wire: headers, JSON responses, protocol version), and
 * its JSON-RPC request is fed to the shared server under a unique id, so concurrent clients never
 * collide while the server itself is not rebuilt per request. Only requests pass: no notification
 * (a cancellation, a progress report) nor any other reference a client sends reaches the server that
 * all callers share, so no caller can touch another's call; a cancellation is accepted and changes
 * nothing, and every call routed is answered (issue 8; what a cancellation means here is on
 * {@link SharedTransport} and in docs/decisions.md).
 */
export class McpEndpoint {
  private readonly server: Server;
  private readonly shared = new SharedTransport();
  private readonly direct: boolean;
  /** How many calls were answered on the direct path (for tests). */
  directCalls = 0;

  /**
   * `options.direct` (default true): a plain `tools/call` is answered on {@link answerDirectly}'s
   * path; false sends every request through the SDK's transport and server (the equivalence tests
   * compare the two).
   */
  constructor(
    private readonly handler: ToolHandler,
    info: { name: string; version: string },
    private readonly log: Logger,
    options: { direct?: boolean } = {},
  ) {
    this.direct = options.direct ?? true;
    this.server = new Server(info, {
      capabilities: { tools: { listChanged: false } },
      instructions:
        "Agent Process server (core-2). Call describe once, then get_work → claim → submit. Every result is { ok, data | error }.",
    });
    const listed = { tools: handler.tools };
    this.server.setRequestHandler(ListToolsRequestSchema, async () => listed);
    this.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const name = request.params.name;
      if (!handler.has(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const auth = extra.authInfo?.extra as AuthExtra | undefined;
      if (!auth) throw new McpError(ErrorCode.InternalError, "request reached the tool without an identity");
      const bad = auth.context.badArguments.get(String(extra.requestId));
      return this.callTool(name, request.params.arguments ?? {}, auth, bad);
    });
  }

  /**
   * One tool call as MCP's `CallToolResult`: the protocol result as text and as structured content,
   * `isError` when it is a refusal; timed, counted, traced and logged (the access line). `bad` names
   * the JSON type of `params.arguments` when it was not an object (answered `invalid`).
   */
  private async callTool(
    name: string,
    args: Record<string, unknown>,
    auth: AuthExtra,
    bad: string | undefined,
  ): Promise<{
    content: { type: "text"; text: string }[];
    structuredContent: Record<string, unknown>;
    isError: boolean;
  }> {
    const handler = this.handler;
    const answer = async (): Promise<ToolResult<unknown>> =>
      auth.context.refusal
        ? auth.context.refusal
        : bad
          ? ({
              ok: false,
              error: {
                code: "invalid",
                message: `arguments do not match ${name}; fix every issue listed`,
                issues: [`arguments: expected object, got ${bad}`],
              },
            } as const)
          : await handler.call(name, args, auth.identity, auth.context);
    const started = performance.now();
    let result: ToolResult<unknown>;
    let traceId: string | undefined;
    if (tracingEnabled()) {
      // The tool call's span, under the HTTP request's: its bus calls carry it to the services.
      result = await inSpan(`tool ${name}`, { attributes: { "baton.tool": name } }, async (span) => {
        traceId = span.traceparent.slice(3, 35);
        const answered = await answer();
        span.set({ "baton.outcome": answered.ok ? "ok" : answered.error.code });
        if (!answered.ok) span.fail(answered.error.code);
        return answered;
      });
    } else {
      auth.context.trace = newTraceparent();
      traceId = auth.context.trace.slice(3, 35);
      result = await answer();
    }
    const outcome = result.ok ? "ok" : result.error.code;
    const seconds = secondsSince(started);
    toolCalls.inc({ tool: name, outcome });
    toolDuration.observe({ tool: name }, seconds);
    // The access line (issue #13): never a token, an argument or a result; the run when known.
    this.log.info(
      {
        tool: name,
        outcome,
        duration_ms: Math.round(seconds * 1e6) / 1000,
        org: auth.identity.org,
        run_id: runIdOf(args, result),
        trace_id: traceId,
      },
      "tool call",
    );
    return {
      content: [{ type: "text", text: JSON.stringify(result) }],
      structuredContent: result as unknown as Record<string, unknown>,
      isError: !result.ok,
    };
  }

  async start(): Promise<void> {
    await this.server.connect(this.shared);
  }

  /**
   * Handles one HTTP request to `/mcp` for an authenticated caller: its parsed `body`, the bearer
   * `token` and `identity` it was verified to, and the per-request facts of {@link CallContext}.
   */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    call: { body: unknown; token: string; identity: Identity; context: CallContext },
  ): Promise<void> {
    const { body, token, identity, context } = call;
    if (this.direct) {
      const direct = plainToolCall(req, body, this.handler);
      if (direct) {
        // Byte for byte what the SDK's server and transport answer (the key order included):
        // `services/gateway/test/direct-calls.test.ts` compares the two paths.
        this.directCalls++;
        let text: string;
        try {
          const result = await this.callTool(direct.name, direct.args, { identity, context }, undefined);
          text = JSON.stringify({ result, jsonrpc: "2.0", id: direct.id });
        } catch (error) {
          // As the SDK's Protocol answers a handler that throws.
          const message = error instanceof Error ? error.message : "Internal error";
          this.log.error({ err: String(error) }, "tool call failed");
          text = JSON.stringify({
            jsonrpc: "2.0",
            id: direct.id,
            error: { code: ErrorCode.InternalError, message },
          });
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(text);
        return;
      }
    }
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    this.shared.attach(transport, context);
    (req as IncomingMessage & { auth?: unknown }).auth = {
      token,
      clientId: identity.id,
      scopes: [],
      extra: { identity, context } satisfies AuthExtra,
    };
    try {
      await transport.handleRequest(req, res, body);
    } finally {
      this.shared.detach(transport);
    }
  }

  async close(): Promise<void> {
    await this.server.close();
  }
}

/** The MCP protocol versions the SDK's transport accepts in `MCP-Protocol-Version`. */
const PROTOCOL_VERSIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);

/** A plain object: not null, not an array, made by JSON (its prototype is Object's). */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * The hot path's test (issue #15: the JSON-RPC frame checked once, no transport built per call):
 * the call when `body` is a plain `tools/call` of a listed tool that the SDK's stateless transport
 * and server would pass without a word — an `Accept` of JSON and event streams, a JSON
 * `Content-Type`, no or a supported `MCP-Protocol-Version`, a JSON-RPC 2.0 request with a string or
 * integer id and no other members, and params of only `name` and an object `arguments` — so it can
 * be answered directly with the same bytes. Anything else (initialize, ping, tools/list,
 * notifications, `_meta`, odd ids or arguments, bad headers) returns null and takes the SDK's path,
 * which answers or refuses it as the SDK does.
 */
function plainToolCall(
  req: IncomingMessage,
  body: unknown,
  handler: ToolHandler,
): { id: string | number; name: string; args: Record<string, unknown> } | null {
  if (!isPlainObject(body) || body.method !== "tools/call" || body.jsonrpc !== "2.0") return null;
  const id = body.id;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return null;
  for (const key in body)
    if (key !== "jsonrpc" && key !== "id" && key !== "method" && key !== "params") return null;
  const params = body.params;
  if (!isPlainObject(params) || typeof params.name !== "string" || !handler.has(params.name)) return null;
  for (const key in params) if (key !== "name" && key !== "arguments") return null;
  // Absent is `{}`; null or any other non-object is the SDK's to answer (`invalid`).
  const args = params.arguments === undefined ? {} : params.arguments;
  if (!isPlainObject(args)) return null;
  const accept = req.headers.accept;
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return null;
  const type = req.headers["content-type"];
  if (type?.split(";", 1)[0]?.trim().toLowerCase() !== "application/json") return null;
  const version = req.headers["mcp-protocol-version"];
  if (version !== undefined && (typeof version !== "string" || !PROTOCOL_VERSIONS.has(version))) return null;
  return { id: id as string | number, name: params.name, args };
}

/**
 * The run a tool call was about, for its access line: the `runId` it named (when the call was not
 * refused as `invalid`, so the text is an id's) or the run its answer shows (`start_run`, `submit`).
 */
function runIdOf(args: Record<string, unknown>, result: ToolResult<unknown>): string | undefined {
  if (!result.ok && result.error.code === "invalid") return undefined;
  if (typeof args.runId === "string") return args.runId;
  const data = result.ok ? (result.data as { run?: { id?: unknown } } | null) : null;
  return typeof data?.run?.id === "string" ? data.run.id : undefined;
}

/**
 * The requests the shared server answers: those it has handlers for (the SDK's `initialize` and `ping`,
 * our `tools/list` and `tools/call`). Any other method is answered `-32601` at the edge, as the SDK
 * would, so a request the SDK may learn to act on later (`tasks/cancel`, say) never reaches state that
 * other callers share.
 */
const SERVED_METHODS: ReadonlySet<string> = new Set(["initialize", "ping", "tools/list", "tools/call"]);

/**
 * The one transport the shared server is connected to, and the gate between it and the callers (issue
 * 8: anything a client sends that refers to a request is resolved within that client's own HTTP
 * request, never in a space shared with other callers).
 *
 * What passes, client → shared server: only a request of {@link SERVED_METHODS}, under a fresh
 * gateway-wide id (`m1`, `m2`, …) that the caller never sees, without its `params._meta` (where MCP
 * carries a progress token or a related task: references the shared server would resolve in its own
 * maps). Nothing else passes: every notification (`notifications/cancelled`, `notifications/progress`,
 * `notifications/initialized` and whatever MCP adds), and every response (the server sends no
 * requests), stops here. The SDK keys cancellation (`Protocol._oncancel`: the abort controller of
 * `params.requestId`) and progress (`Protocol._onprogress`: the handler of `Number(progressToken)`) by
 * ids in one map per `Server`, so a reference that reached the shared server would be resolved among
 * every caller's calls.
 *
 * What a cancellation means on this stateless gateway: nothing; it is accepted (HTTP 202) and dropped.
 * Resolved in the caller's own HTTP request it could never name a call anyway, since a POST carries
 * one message (batches are refused, `body.ts`), so a notification's request holds no call. A call is
 * never stopped half-way: once it is routed its write may be applied whatever the caller does, and
 * an answer is what tells the caller the outcome, so every call routed here is answered. MCP lets a
 * receiver ignore a cancellation it cannot act on. A caller that stops waiting closes its HTTP
 * request (a clean close on its side); the call still finishes and its write, if any, stands; the
 * same call resent with the same `requestId` answers that outcome (§4.3).
 *
 * Server → client: a response goes back to the HTTP request its id was issued for, with the caller's
 * own id; any other message only on the stream of the request it relates to; nothing else anywhere.
 */
class SharedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private readonly pending = new Map<
    string,
    { transport: StreamableHTTPServerTransport; original: RequestId }
  >();
  private seq = 0;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const key = String(message.id);
      const route = this.pending.get(key);
      if (!route) return;
      this.pending.delete(key);
      await route.transport.send({ ...message, id: route.original } as JSONRPCMessage);
      return;
    }
    const related = options?.relatedRequestId;
    if (related !== undefined) {
      const route = this.pending.get(String(related));
      if (route) await route.transport.send(message, { relatedRequestId: route.original });
    }
  }

  attach(transport: StreamableHTTPServerTransport, context: CallContext): void {
    transport.onmessage = (message, extra) => {
      // Notifications and responses stop here (see the class comment).
      if (!isJSONRPCRequest(message)) return;
      if (!SERVED_METHODS.has(message.method)) {
        void transport.send({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: ErrorCode.MethodNotFound, message: "Method not found" },
        });
        return;
      }
      const id = `m${++this.seq}`;
      const { _meta: _references, ...params } = (message.params ?? {}) as Record<string, unknown>;
      let request: JSONRPCMessage = { jsonrpc: "2.0", id, method: message.method, params };
      if (message.method === "tools/call") {
        if (typeof params.name !== "string") {
          void transport.send({
            jsonrpc: "2.0",
            id: message.id,
            error: {
              code: ErrorCode.InvalidParams,
              message: "tools/call needs params.name, the tool to call",
            },
          });
          return;
        }
        const args = params.arguments;
        if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) {
          context.badArguments.set(id, args === null ? "null" : Array.isArray(args) ? "array" : typeof args);
          request = { jsonrpc: "2.0", id, method: message.method, params: { ...params, arguments: {} } };
        }
      }
      this.pending.set(id, { transport, original: message.id });
      this.onmessage?.(request, extra);
    };
  }

  detach(transport: StreamableHTTPServerTransport): void {
    for (const [id, route] of this.pending) if (route.transport === transport) this.pending.delete(id);
  }
}
