/**
 * The load generator's MCP client (issue #15): one plain JSON-RPC `tools/call` POST per call over a
 * keep-alive `node:http` agent, which the gateway answers directly with `application/json`
 * (`plainToolCall` in services/gateway/src/mcp.ts). It costs the generator far less CPU than
 * `fetch` (no Web Request/Response, no stream per call), so the machine's cores go to the server.
 */
import { Agent, request } from "node:http";

/** A tool's answer as the bench reads it (the protocol's `{ ok, data }` or `{ ok: false, error }`). */
// biome-ignore lint/suspicious/noExplicitAny: the bench reads result shapes dynamically
export type Result = { ok: true; data: any } | { ok: false; error: { code: string; issues?: unknown } };

/** Latencies of answered calls, ms, by tool; and the count of calls that did not answer `ok`. */
export class Latencies {
  readonly byTool = new Map<string, number[]>();
  errors = 0;
  /** Error codes seen, with counts (`http 503`, `retry`, `conflict`, …). */
  readonly errorCodes = new Map<string, number>();

  /** Records one call of `tool` that took `ms`; `code` is set when it was refused. */
  record(tool: string, ms: number, code?: string): void {
    let list = this.byTool.get(tool);
    if (!list) {
      list = [];
      this.byTool.set(tool, list);
    }
    list.push(ms);
    if (code !== undefined) {
      this.errors++;
      this.errorCodes.set(`${tool} ${code}`, (this.errorCodes.get(`${tool} ${code}`) ?? 0) + 1);
    }
  }
}

let rpcId = 0;

/**
 * One identity's connection to the MCP endpoint `url`: calls share `agent` (keep-alive sockets, one
 * per call in flight) and record their latency in `latencies`.
 */
export class BenchClient {
  private readonly host: string;
  private readonly port: number;
  private readonly path: string;
  private readonly headers: Record<string, string>;

  constructor(
    url: string,
    token: string,
    private readonly agent: Agent,
    private readonly latencies: Latencies,
  ) {
    const u = new URL(url);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.path = u.pathname;
    this.headers = {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
  }

  /**
   * Calls `tool` with `args`; resolves to its result (a transport failure or a JSON-RPC error is a
   * result with code `http <status>` or `rpc`), never rejects. `expected` codes (a `conflict` of
   * a claim another agent won, say) are recorded as latencies but not as errors.
   */
  call(tool: string, args: object, expected: readonly string[] = []): Promise<Result> {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: ++rpcId,
      method: "tools/call",
      params: { name: tool, arguments: args },
    });
    const started = performance.now();
    return new Promise<Result>((resolve) => {
      const done = (result: Result) => {
        const code = result.ok ? undefined : result.error.code;
        this.latencies.record(
          tool,
          performance.now() - started,
          code !== undefined && !expected.includes(code) ? code : undefined,
        );
        resolve(result);
      };
      const req = request(
        {
          host: this.host,
          port: this.port,
          path: this.path,
          method: "POST",
          agent: this.agent,
          headers: { ...this.headers, "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            try {
              const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
                result?: { structuredContent: Result };
              };
              done(
                parsed.result?.structuredContent ?? { ok: false, error: { code: `http ${res.statusCode}` } },
              );
            } catch {
              done({ ok: false, error: { code: `http ${res.statusCode}` } });
            }
          });
          res.on("error", () => done({ ok: false, error: { code: "socket" } }));
        },
      );
      req.on("error", () => done({ ok: false, error: { code: "socket" } }));
      req.end(body);
    });
  }
}

/** A keep-alive agent for the load generator: sockets are reused between calls and never capped. */
export function keepAliveAgent(): Agent {
  return new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
}
