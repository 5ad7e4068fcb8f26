import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";

/**
 * An HTTP proxy in front of a server's MCP endpoint that rewrites some tool answers, for showing that
 * `baton conformance` catches a non-conforming server (issue #18). Everything passes through
 * untouched (the admin API, MCP's handshake and streams) but the JSON answers of `tools/call`, which
 * a {@link Fault} may rewrite: its `rewrite` gets the tool, its arguments and the tool result
 * (`{ ok, data | error }`) and returns a replacement, or undefined to leave it. The replacement is
 * written to both `structuredContent` and the text content, with `isError` to match, so the answer
 * stays a well-formed MCP result and only the protocol content is wrong.
 */

// biome-ignore lint/suspicious/noExplicitAny: a proxy rewrites arbitrary tool results
type Json = any;

/** One kind of fault: a name and the rewrite of the tool results it applies to. */
export interface Fault {
  name: string;
  rewrite(tool: string, args: Json, result: Json): Json | undefined;
  /** `serverInfo.name` to claim in the MCP handshake instead of the server's own. */
  serverName?: string;
}

/** A running proxy: its MCP URL, the fault in force (settable), and how many answers it rewrote. */
export interface FaultProxy {
  url: string;
  fault: Fault | null;
  rewritten: number;
  stop(): Promise<void>;
}

const HOP = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);

function body(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Starts a proxy on 127.0.0.1 for the server whose MCP endpoint is `upstream` (`…/mcp`). */
export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const base = new URL(upstream).origin;
  const state: FaultProxy = { url: "", fault: null, rewritten: 0, stop: async () => {} };
  const server: Server = createServer(async (req, res) => {
    try {
      const raw = await body(req);
      const headers = Object.fromEntries(
        Object.entries(req.headers)
          .filter(([k, v]) => !HOP.has(k) && v !== undefined)
          .map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v as string)]),
      );
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const answer = await fetch(`${base}${req.url}`, {
        method: req.method ?? "GET",
        headers,
        ...(hasBody ? { body: raw } : {}),
      });
      const outHeaders: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (!HOP.has(k) && k !== "content-encoding") outHeaders[k] = v;
      });
      let call: Json = null;
      try {
        call = hasBody && req.url?.startsWith("/mcp") ? JSON.parse(raw.toString("utf8")) : null;
      } catch {}
      const json = (answer.headers.get("content-type") ?? "").startsWith("application/json");
      const fault = state.fault;
      if (!fault || !json || !call || Array.isArray(call)) {
        res.writeHead(answer.status, outHeaders);
        if (answer.body) Readable.fromWeb(answer.body as never).pipe(res);
        else res.end();
        return;
      }
      const text = await answer.text();
      let reply: Json;
      try {
        reply = JSON.parse(text);
      } catch {
        res.writeHead(answer.status, outHeaders).end(text);
        return;
      }
      if (call.method === "initialize" && fault.serverName && reply.result?.serverInfo)
        reply.result.serverInfo.name = fault.serverName;
      const structured = reply.result?.structuredContent;
      if (call.method === "tools/call" && structured) {
        const replaced = fault.rewrite(call.params.name, call.params.arguments ?? {}, structured);
        if (replaced !== undefined) {
          state.rewritten++;
          reply.result.structuredContent = replaced;
          reply.result.content = [{ type: "text", text: JSON.stringify(replaced) }];
          reply.result.isError = !replaced.ok;
        }
      }
      const out = JSON.stringify(reply);
      res
        .writeHead(answer.status, { ...outHeaders, "content-length": String(Buffer.byteLength(out)) })
        .end(out);
    } catch (error) {
      res.writeHead(502, { "content-type": "text/plain" }).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  state.stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

/**
 * The fault kinds the runner must catch, each with the `--only` pattern of the checks that meet it
 * and the rule its failing line must name (a tag of the broken check's title).
 */
export const FAULTS: { fault: Fault; only: string; rule: string; broken: RegExp }[] = [
  {
    // A wrong error code: claiming a step another agent holds is conflict claimed_by_other (tools.md claim).
    fault: {
      name: "wrong error code",
      rewrite: (tool, _args, r) =>
        tool === "claim" && !r.ok && r.error.issues?.includes("claimed_by_other")
          ? { ok: false, error: { code: "forbidden", message: "Not yours." } }
          : undefined,
    },
    only: "claim.conflict:claimed_by_other",
    rule: "claim.conflict:claimed_by_other",
    broken: /expected conflict, got .*forbidden|expected 'forbidden' to be 'conflict'/,
  },
  {
    // A dropped required field: a claim without its expiresAt (tools.md claim; the official schema).
    fault: {
      name: "dropped field",
      rewrite: (tool, _args, r) => {
        if (tool !== "claim" || !r.ok) return undefined;
        const { expiresAt: _dropped, ...data } = r.data;
        return { ok: true, data };
      },
    },
    only: "R2-5 #13 #50",
    rule: "R2-5",
    broken: /claim response breaks the official schema/,
  },
  {
    // A reordered check: decide answers forbidden where already_decided comes first (tools.md decide order).
    fault: {
      name: "reordered check",
      rewrite: (tool, _args, r) =>
        tool === "decide" && !r.ok && r.error.issues?.includes("already_decided")
          ? { ok: false, error: { code: "forbidden", message: "Not assigned to you." } }
          : undefined,
    },
    only: "decide.order",
    rule: "decide.order",
    broken: /expected conflict, got .*forbidden|expected 'forbidden' to be 'conflict'/,
  },
  {
    // A replay that returns a different result: the second answer to a requestId has a new updatedAt (§4).
    fault: (() => {
      const seen = new Set<string>();
      return {
        name: "replay with a different result",
        rewrite: (tool: string, args: Json, r: Json) => {
          if (!r.ok || typeof args.requestId !== "string" || !r.data?.run?.updatedAt) return undefined;
          const key = `${tool} ${args.requestId}`;
          if (!seen.has(key)) {
            seen.add(key);
            return undefined;
          }
          const later = new Date(Date.parse(r.data.run.updatedAt) + 1000).toISOString();
          return { ok: true, data: { ...r.data, run: { ...r.data.run, updatedAt: later } } };
        },
      };
    })(),
    only: "R2-5 #13 #50",
    rule: "R2-5",
    broken: /expected .* to deeply equal/,
  },
];
