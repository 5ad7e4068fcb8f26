import type { FastifyInstance } from "fastify";
import { z } from "zod";

/**
 * The `Origin` check of MCP Streamable HTTP (transport security: "Servers MUST validate the Origin
 * header on all incoming connections to prevent DNS rebinding attacks"; issue #12). A browser page
 * on another site, or one that rebinds its own name to this server's address, sends its own origin
 * and is refused with 403 before anything else is read. A request without `Origin` (a server-side
 * client: an agent, the CLI) is not a browser's and passes. The console, served by this gateway at
 * `/ui/`, calls from the public URL's origin, which is allowed by default.
 */

/** `BATON_ALLOWED_ORIGINS`, as a zod field for the gateway's config. */
export const ORIGIN_ENV = {
  BATON_ALLOWED_ORIGINS: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter((x) => x !== ""),
    )
    .pipe(z.array(z.url()))
    .optional()
    .describe(
      "Browser origins allowed to call /mcp and /api, comma-separated (scheme://host[:port]); any other Origin is refused with 403 (MCP DNS-rebinding defence). Requests without Origin (agents, the CLI) always pass. Default: the origin of BATON_PUBLIC_URL (and its loopback aliases when that is a loopback address).",
    ),
} as const;

const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];

/** `origin` as the browser writes it (`scheme://host[:port]`, default ports dropped), or null. */
function normalize(origin: string): string | null {
  try {
    const url = new URL(origin);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    return url.origin;
  } catch {
    return null;
  }
}

/**
 * The origins allowed: `configured` when given, else the origin of `publicUrl`. A loopback public URL
 * (`baton dev`'s `http://127.0.0.1:7800`) also allows the same port under the other loopback names, so
 * a console opened at `localhost` works; no other site's name can reach those.
 */
export function allowedOrigins(publicUrl: string, configured?: readonly string[]): Set<string> {
  if (configured && configured.length > 0) {
    return new Set(configured.map((o) => normalize(o)).filter((o): o is string => o !== null));
  }
  const url = new URL(publicUrl);
  const allowed = new Set([url.origin]);
  if (LOOPBACK.includes(url.hostname)) {
    for (const host of LOOPBACK) allowed.add(`${url.protocol}//${host}${url.port ? `:${url.port}` : ""}`);
  }
  return allowed;
}

/**
 * Refuses, with 403, every request to `/mcp` and `/api` whose `Origin` is not in `allowed` (a
 * JSON-RPC error on `/mcp`, the protocol's error shape on `/api`). `Origin: null` (a sandboxed frame,
 * a file) is refused too.
 */
export function registerOriginCheck(app: FastifyInstance, allowed: ReadonlySet<string>): void {
  app.addHook("onRequest", async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    const path = request.url;
    const mcp = path === "/mcp" || path.startsWith("/mcp?") || path.startsWith("/mcp/");
    if (!mcp && !path.startsWith("/api/")) return;
    const normalized = normalize(origin);
    if (normalized !== null && allowed.has(normalized)) return;
    const message = `the Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed to call this server (DNS-rebinding defence); allowed: ${[...allowed].join(", ")} (BATON_ALLOWED_ORIGINS)`;
    await (mcp
      ? reply.code(403).send({ jsonrpc: "2.0", id: null, error: { code: -32000, message } })
      : reply.code(403).send({ ok: false, error: { code: "forbidden", message } }));
    return reply;
  });
}
