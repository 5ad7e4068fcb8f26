import type { BearerVerifier, FileUrls } from "@baton/auth";
import { attachmentDisposition, type BlobStore, blobKey } from "@baton/blob";
import { type Bus, CONTRACTS, call } from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Logger } from "@baton/kit";
import { textProblem } from "@baton/process";
import {
  fail,
  type Identity,
  NotifierCall,
  notifierCallRefusal,
  protocolError,
  type ToolName,
  type ToolResult,
  type WhoAmI,
  WRITE_TOOLS,
} from "@baton/protocol";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { registerAdminReads } from "./admin-reads.ts";
import { ARGUMENTS, argumentProblems, type ParsedBody, parseBody } from "./body.ts";
import { type ConsoleSignIn, registerConsole } from "./console.ts";
import type { FileLinks } from "./file-links.ts";
import { MAX_ADMIN_BODY_BYTES } from "./limits.ts";
import { type CallContext, McpEndpoint, type ToolHandler } from "./mcp.ts";
import { allowedOrigins, registerOriginCheck } from "./origin.ts";
import { limitedMessage, type RateLimiter } from "./rate-limit.ts";
import { HTTP_STATUS } from "./status.ts";

/** Gateway settings for HTTP. */
export interface HttpSettings {
  /** Public base URL, e.g. `https://baton.example.com`; the MCP resource is `<publicUrl>/mcp`. */
  publicUrl: string;
  /** The token issuer (`iss`), advertised as the authorization server. */
  issuer: string;
  /** Request body cap in bytes (uploads arrive as base64 inside JSON). */
  bodyLimit: number;
  callTimeoutMs: number;
  /** One attempt of a read (a file's metadata) before it is sent again, ms. */
  attemptMs: number;
  /** Lifetime of a presigned download a `/files` link redirects to, seconds. */
  urlSeconds: number;
  version: string;
  /** The web console's build folder, served at `/ui/` (issue #16). */
  consoleDir: string;
  /** The console's OIDC sign-in at {@link HttpSettings.issuer}; without it, people paste a bearer token. */
  consoleSignIn?: ConsoleSignIn;
  /** Browser origins allowed on `/mcp` and `/api` (default: the public URL's; `origin.ts`). */
  allowedOrigins?: readonly string[];
  /** Answer a plain `tools/call` without the SDK's transport and server (`McpEndpoint`'s `direct`). */
  directCalls?: boolean;
}

/** A request's verified caller (see `authenticate` in {@link createHttpServer}). */
interface Caller {
  token: string;
  identity: Identity;
  /** The OAuth client the token names (`client_id`, `azp`, `cid`, `appid`), or null. */
  client: string | null;
  /** The token's `exp`, epoch ms. */
  expiresAt: number;
}

/** What the HTTP layer needs. */
export interface HttpDeps {
  bus: Bus;
  clock: Clock;
  log: Logger;
  blobs: BlobStore;
  verifier: BearerVerifier;
  fileUrls: FileUrls;
  fileLinks: FileLinks;
  tools: ToolHandler;
  /** Rate limits per caller and organization (issue #12). */
  limiter: RateLimiter;
  settings: HttpSettings;
}

/**
 * The gateway's HTTP server (fastify): MCP Streamable HTTP at `/mcp` (stateless, JSON responses,
 * bearer tokens), the protected-resource metadata of MCP authorization, the admin API under `/api`
 * that the CLI uses, signed file downloads under `/files`, and health probes.
 */
export async function createHttpServer(deps: HttpDeps): Promise<FastifyInstance> {
  const { bus, clock, log, blobs, verifier, fileUrls, fileLinks, tools, limiter, settings } = deps;
  const resource = `${settings.publicUrl}/mcp`;
  const metadataUrl = `${settings.publicUrl}/.well-known/oauth-protected-resource`;
  const mcp = new McpEndpoint(tools, { name: "baton", version: settings.version }, log, {
    direct: settings.directCalls ?? true,
  });
  await mcp.start();

  // Anything fastify refuses before a route runs (no or another content type, a body over the limit,
  // a path whose percent-encoding is not UTF-8) still answers as JSON-RPC on /mcp and as the
  // protocol's error shape elsewhere, saying what to fix.
  const refuse = (
    error: Error & { statusCode?: number; code?: string },
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const status =
      error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    const message =
      error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE"
        ? "send the body as JSON with Content-Type: application/json"
        : error.code === "FST_ERR_CTP_BODY_TOO_LARGE"
          ? `the body is larger than ${settings.bodyLimit} bytes; uploads are at most describe.maxUploadBytes before base64`
          : error.code === "FST_ERR_BAD_URL"
            ? "the URL's percent-encoding is not UTF-8 text (issue #8); encode each id as UTF-8"
            : status === 500
              ? "internal error"
              : error.message;
    // The path only: a query may hold a file link's signature (issue #12: secrets stay out of logs).
    if (status === 500) log.error({ err: String(error), url: request.url.split("?")[0] }, "request failed");
    if (request.url.startsWith("/mcp")) {
      return reply
        .code(status)
        .send({ jsonrpc: "2.0", id: null, error: { code: status === 500 ? -32603 : -32600, message } });
    }
    return reply
      .code(status)
      .send({ ok: false, error: { code: status === 500 ? "retry" : "invalid", message } });
  };
  const app = Fastify({ logger: false, bodyLimit: settings.bodyLimit, frameworkErrors: refuse });
  app.removeAllContentTypeParsers();
  // A tool call's limits apply to its arguments; an admin call's to its whole body.
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    done(null, parseBody(body as string, request.url.startsWith("/mcp") ? ARGUMENTS : ""));
  });
  app.setErrorHandler(refuse);
  // Before anything else is read (issue #12, MCP transport security).
  registerOriginCheck(app, allowedOrigins(settings.publicUrl, settings.allowedOrigins));

  /**
   * The caller of a request: its bearer token, the identity the claim mapping read from it, the
   * OAuth client it names and when it expires (epoch ms); or null after answering 401 (503 when
   * the issuer's keys could not be fetched).
   */
  async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<Caller | null> {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) {
      void reply
        .code(401)
        .header("WWW-Authenticate", `Bearer resource_metadata="${metadataUrl}"`)
        .send({ error: "unauthorized", error_description: "send Authorization: Bearer <token>" });
      return null;
    }
    const token = match[1] as string;
    const verified = await verifier.verify(token);
    if (!verified.ok && verified.error.retryable) {
      // The issuer's keys could not be fetched: the token may be fine, so no 401 (which tells a
      // client to get a new token), but a 503 to send the same one again.
      void reply
        .code(503)
        .header("Retry-After", "5")
        .send({ error: verified.error.error, error_description: verified.error.description });
      return null;
    }
    if (!verified.ok) {
      // RFC 6750 §3: error_description holds %x20-21 / %x23-5B / %x5D-7E only (and a header value
      // outside Latin-1 would throw); the JSON body keeps the text as it is.
      const description = verified.error.description
        .replace(/"/g, "'")
        .replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, "?");
      void reply
        .code(401)
        .header(
          "WWW-Authenticate",
          `Bearer resource_metadata="${metadataUrl}", error="invalid_token", error_description="${description}"`,
        )
        .send({ error: "invalid_token", error_description: verified.error.description });
      return null;
    }
    const { client, ...identity } = verified.identity;
    return { token, identity, client: client ?? null, expiresAt: verified.expiresAt };
  }

  /**
   * {@link authenticate}, then the caller's rate limit (issue #12) for an admin API call: a `GET`
   * draws on the read budget, anything else on the write budget; over it, 429 with `Retry-After`.
   */
  async function limitedAuthenticate(request: FastifyRequest, reply: FastifyReply): Promise<Caller | null> {
    const auth = await authenticate(request, reply);
    if (!auth) return null;
    const limited = await limiter.take(auth.identity, request.method === "GET" ? "read" : "write");
    if (!limited) return auth;
    void reply
      .code(429)
      .header("Retry-After", String(limited.retryAfterSeconds))
      .send(fail(protocolError("retry", limitedMessage(limited))));
    return null;
  }

  app.get("/.well-known/oauth-protected-resource", async () => ({
    resource,
    authorization_servers: [settings.issuer],
    bearer_methods_supported: ["header"],
    resource_name: "Baton (Agent Process core-2)",
  }));
  app.get("/.well-known/oauth-protected-resource/mcp", async () => ({
    resource,
    authorization_servers: [settings.issuer],
    bearer_methods_supported: ["header"],
    resource_name: "Baton (Agent Process core-2)",
  }));
  app.get("/healthz", async () => ({ ok: true }));

  // Who the server takes the caller to be (issue #16): the verified identity after the claim
  // mapping, for anyone with a token it accepts. It reads nothing but the caller's own token, so no
  // parameter can name anyone else; the token itself is never echoed.
  app.get("/api/whoami", async (request, reply) => {
    const caller = await limitedAuthenticate(request, reply);
    if (!caller) return reply;
    const { identity } = caller;
    const data: WhoAmI = {
      id: identity.id,
      org: identity.org,
      kind: identity.kind,
      groups: identity.groups,
      roles: identity.operator ? ["operator"] : [],
      client: caller.client,
      expiresAt: new Date(caller.expiresAt).toISOString(),
    };
    return reply.header("Cache-Control", "no-store").send({ ok: true, data });
  });

  app.post("/mcp", async (request, reply) => {
    const auth = await authenticate(request, reply);
    if (!auth) return reply;
    const body = request.body as ParsedBody | undefined;
    // Every authenticated request counts, malformed ones too (issue #12).
    const call = toolCalled(body);
    const limited = await limiter.take(
      auth.identity,
      call !== null && WRITE_TOOLS.has(call) ? "write" : "read",
    );
    let refusal: ToolResult<never> | undefined;
    if (limited) {
      const message = limitedMessage(limited);
      if (call === null) {
        return reply
          .code(429)
          .header("Retry-After", String(limited.retryAfterSeconds))
          .send({ jsonrpc: "2.0", id: null, error: { code: -32000, message } });
      }
      // A tool call gets the protocol's answer, `retry` (§4.3), with the wait where HTTP carries it.
      reply.raw.setHeader("Retry-After", String(limited.retryAfterSeconds));
      refusal = fail(protocolError("retry", message));
    }
    if (!body || typeof body !== "object" || !("kind" in body)) {
      return reply.code(415).send({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "send the body as JSON with Content-Type: application/json" },
      });
    }
    if (body.kind === "error") {
      return reply
        .code(body.status)
        .send({ jsonrpc: "2.0", id: null, error: { code: body.code, message: body.message } });
    }
    const context: CallContext = {
      problems: argumentProblems(body),
      badArguments: new Map(),
      bodyBytes: body.bytes,
      ...(refusal ? { refusal } : {}),
    };
    reply.hijack();
    await mcp.handle(request.raw, reply.raw, {
      body: body.value,
      token: auth.token,
      identity: auth.identity,
      context,
    });
    return reply;
  });
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(405)
      .header("Allow", "POST")
      .send({
        jsonrpc: "2.0",
        error: {
          code: -32000,
          message: "Method not allowed: this server is stateless; POST JSON-RPC to /mcp",
        },
        id: null,
      });
  app.get("/mcp", notAllowed);
  app.delete("/mcp", notAllowed);

  /**
   * Admin API (§7 import, bind, publish; the clock), used by `baton publish` and `baton clock`.
   * Operators only. `send` makes the service call as the caller, by the deadline (epoch ms); it is
   * sent once per attempt that finds a service (an import is not safe to send twice).
   */
  async function admin(
    request: FastifyRequest,
    reply: FastifyReply,
    send: (as: { identity: Identity; deadline: number }) => Promise<ToolResult<unknown>>,
  ) {
    const auth = await limitedAuthenticate(request, reply);
    if (!auth) return reply;
    const body = request.body as ParsedBody | undefined;
    if (body && typeof body === "object" && "kind" in body && body.kind === "error") {
      return reply.code(400).send({ ok: false, error: { code: "invalid", message: body.message } });
    }
    if (body?.kind === "json" && body.bytes > MAX_ADMIN_BODY_BYTES) {
      // Issue #12: the body crosses the bus in one message (NATS: 1 MB at most).
      return reply
        .code(413)
        .send(
          fail(
            protocolError(
              "invalid",
              `the body is ${body.bytes} bytes; the admin API takes at most ${MAX_ADMIN_BODY_BYTES} (server limit)`,
              [`body: at most ${MAX_ADMIN_BODY_BYTES} bytes; a PROCESS.md source must fit`],
            ),
          ),
        );
    }
    if (!auth.identity.operator) {
      return reply.code(403).send({
        ok: false,
        error: { code: "forbidden", message: "the admin API needs a token with the operator role" },
      });
    }
    // Text Baton cannot store (issue #8) is refused here, in the body and in the path's ids alike,
    // before anything crosses the bus: no later identical call could get past it, so never `retry`.
    const issues: string[] = [];
    for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, unknown>)) {
      const problem = typeof value === "string" ? textProblem(value) : null;
      if (problem !== null) issues.push(`${name}: ${problem}`);
    }
    if (body?.kind === "json") for (const p of body.problems) issues.push(`${p.path}: ${p.problem}`);
    if (issues.length > 0) {
      const message = "the request carries values Baton cannot store; fix every issue listed";
      return reply.code(400).send(fail(protocolError("invalid", message, issues)));
    }
    try {
      const result = await send({ identity: auth.identity, deadline: Date.now() + settings.callTimeoutMs });
      return reply.code(result.ok ? 200 : (HTTP_STATUS[result.error.code] ?? 400)).send(result);
    } catch (error) {
      log.warn({ err: String(error) }, "admin call failed");
      return reply.code(503).send({
        ok: false,
        error: { code: "retry", message: "the server could not complete this call now; retry" },
      });
    }
  }
  const jsonBody = (request: FastifyRequest): Record<string, unknown> => {
    const body = request.body as ParsedBody | undefined;
    if (body?.kind !== "json" || body.value === null || typeof body.value !== "object") return {};
    return body.value as Record<string, unknown>;
  };

  app.post("/api/processes", (request, reply) =>
    admin(request, reply, (as) => {
      const body = jsonBody(request);
      const folderName = typeof body.folderName === "string" ? body.folderName : null;
      const source = typeof body.source === "string" ? body.source : "";
      return call(bus, CONTRACTS.registry, { op: "import", folderName, source }, as);
    }),
  );
  app.get<{ Params: { draftId: string } }>("/api/drafts/:draftId", (request, reply) =>
    admin(request, reply, (as) =>
      call(bus, CONTRACTS.registry, { op: "get_draft", draftId: request.params.draftId }, as),
    ),
  );
  app.put<{ Params: { draftId: string } }>("/api/drafts/:draftId/bindings", (request, reply) =>
    admin(request, reply, (as) => {
      const body = jsonBody(request);
      // Group ids as sent: the registry checks each against the draft's roles.
      const bindings: Record<string, unknown> =
        body.bindings && typeof body.bindings === "object" ? { ...body.bindings } : {};
      return call(bus, CONTRACTS.registry, { op: "bind", draftId: request.params.draftId, bindings }, as);
    }),
  );
  app.post<{ Params: { draftId: string } }>("/api/drafts/:draftId/publish", (request, reply) =>
    admin(request, reply, (as) =>
      call(bus, CONTRACTS.registry, { op: "publish", draftId: request.params.draftId }, as),
    ),
  );
  // The clock (issue #5): its time for any operator; moving it only when it is manual. An advance
  // returns once every timer that fell due has been applied, or with `pending` > 0 when the call's
  // deadline came first (then the same `{ ms, requestId }` again carries on without moving it twice).
  app.get("/api/clock", (request, reply) =>
    admin(request, reply, (as) => call(bus, CONTRACTS.scheduler, { op: "now" }, as)),
  );
  // The scheduler answers a real-time clock with conflict, after the operator check like every admin call.
  app.post("/api/clock/advance", (request, reply) => {
    return admin(request, reply, (as) => {
      const body = jsonBody(request);
      // Both checked by the scheduler (a whole number of ms; a string of 1–200 characters), after who
      // may move the clock: passed as sent, so a wrong type is refused there.
      const ms = typeof body.ms === "number" ? body.ms : null;
      const requestId = body.requestId !== undefined ? { requestId: body.requestId } : {};
      return call(bus, CONTRACTS.scheduler, { op: "advance", ms, ...requestId }, as);
    });
  });

  // The notifier (issue #11): webhook subscriptions, group mailing addresses and the record of
  // deliveries. Values as sent, checked here by the notifier's own schema (`invalid` with every
  // issue), so the notifier never sees a call it would refuse.
  const notifier = (request: FastifyRequest, reply: FastifyReply, payload: () => Record<string, unknown>) =>
    admin(request, reply, async (as) => {
      const parsed = NotifierCall.safeParse(payload());
      if (!parsed.success) return fail(notifierCallRefusal(parsed.error.issues));
      return call(bus, CONTRACTS.notifier, parsed.data, as);
    });
  const param = (request: FastifyRequest, name: string) => (request.params as Record<string, string>)[name];
  const whole = (value: string | undefined) =>
    value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : value;
  app.post("/api/webhooks", (request, reply) =>
    notifier(request, reply, () => {
      const body = jsonBody(request);
      return {
        op: "webhook_add",
        url: body.url,
        events: body.events ?? null,
        includeTestRuns: body.includeTestRuns ?? false,
      };
    }),
  );
  app.get("/api/webhooks", (request, reply) => notifier(request, reply, () => ({ op: "webhook_list" })));
  app.delete("/api/webhooks/:id", (request, reply) =>
    notifier(request, reply, () => ({ op: "webhook_remove", id: param(request, "id") })),
  );
  app.get("/api/webhooks/:id/deliveries", (request, reply) =>
    notifier(request, reply, () => {
      const limit = whole((request.query as { limit?: string }).limit);
      return {
        op: "webhook_deliveries",
        id: param(request, "id"),
        ...(limit === undefined ? {} : { limit }),
      };
    }),
  );
  app.get("/api/runs/:id/deliveries", (request, reply) =>
    notifier(request, reply, () => ({ op: "run_deliveries", runId: param(request, "id") })),
  );
  app.post("/api/deliveries/:id/redeliver", (request, reply) =>
    notifier(request, reply, () => ({ op: "redeliver", deliveryId: whole(param(request, "id")) })),
  );
  app.put("/api/groups/:group/email", (request, reply) =>
    notifier(request, reply, () => ({
      op: "group_email",
      group: param(request, "group"),
      address: jsonBody(request).address ?? null,
    })),
  );
  app.get("/api/groups/emails", (request, reply) => notifier(request, reply, () => ({ op: "group_emails" })));
  // Orphan collection (issue #10, `baton evidence gc`): one page per call, in the operator's organization.
  app.post("/api/evidence/gc", (request, reply) =>
    admin(request, reply, (as) => {
      const body = jsonBody(request);
      // Checked by the evidence service, after who may collect; passed as sent so a wrong type is refused there.
      const payload = {
        op: "gc",
        olderThanMs: body.olderThanMs,
        dryRun: body.dryRun ?? true,
        cursor: body.cursor ?? null,
        limit: body.limit ?? 100,
      } as const;
      return call(bus, CONTRACTS.evidence, payload, as);
    }),
  );

  // Versions and journals for anyone in the organization, and the web console (issue #16).
  registerAdminReads(app, {
    bus,
    log,
    fileLinks,
    callTimeoutMs: settings.callTimeoutMs,
    authenticate: limitedAuthenticate,
  });
  await registerConsole(app, {
    dir: settings.consoleDir,
    signIn: settings.consoleSignIn ? { ...settings.consoleSignIn, issuer: settings.issuer } : undefined,
    log,
  });

  // Short-lived, signed file downloads (§5 `url`).
  app.get<{ Params: { id: string } }>("/files/:id", async (request, reply) => {
    const { id } = request.params;
    const q = request.query as { org?: string; exp?: string; sig?: string };
    if (!q.org || !q.exp || !q.sig || !fileUrls.check(q.org, id, Number(q.exp), q.sig, clock.now())) {
      return reply
        .code(403)
        .send({ error: "this file link is not valid or has expired; read the run again for a fresh url" });
    }
    const who: Identity = { org: q.org, kind: "agent", id: "file-download", groups: [], operator: false };
    let meta: { sha256: string; contentType: string; fileName: string } | null;
    try {
      meta = await call(
        bus,
        CONTRACTS.evidence,
        { op: "get", id },
        { identity: who, deadline: Date.now() + settings.callTimeoutMs, attemptMs: settings.attemptMs },
      );
    } catch (error) {
      log.warn({ err: String(error) }, "file lookup failed");
      return reply
        .code(503)
        .header("Retry-After", "1")
        .send({ error: "the server could not look the file up now; try again" });
    }
    if (!meta) return reply.code(404).send({ error: "no such file" });
    const key = blobKey(q.org, meta.sha256);
    let bytes: Buffer | null;
    try {
      // On S3 the bytes come straight from the bucket: the link redirects to a presigned GET.
      const presigned = await blobs.presign(key, {
        fileName: meta.fileName,
        contentType: meta.contentType,
        expiresInSeconds: settings.urlSeconds,
      });
      if (presigned) return reply.code(302).header("Cache-Control", "private, no-store").redirect(presigned);
      bytes = await blobs.get(key);
    } catch (error) {
      log.warn({ err: String(error), store: blobs.location }, "file download failed");
      return reply
        .code(503)
        .header("Retry-After", "1")
        .send({ error: "the file store cannot be reached now; try again" });
    }
    if (!bytes) return reply.code(404).send({ error: "no such file" });
    return reply
      .header("Content-Type", meta.contentType)
      .header("Content-Disposition", attachmentDisposition(meta.fileName))
      .header("Cache-Control", "private, no-store")
      .send(bytes);
  });

  app.addHook("onClose", async () => {
    await mcp.close();
    await limiter.close();
  });
  return app;
}

/** The tool a JSON-RPC body calls (`tools/call` with a string `params.name`), or null for anything else. */
function toolCalled(body: ParsedBody | undefined): ToolName | null {
  if (body?.kind !== "json" || body.value === null || typeof body.value !== "object") return null;
  const message = body.value as { method?: unknown; params?: { name?: unknown } };
  if (message.method !== "tools/call" || typeof message.params?.name !== "string") return null;
  return message.params.name as ToolName;
}

/**
 * Stops the HTTP server the way a restart needs it: no new connections; every request in flight
 * answered; each keep-alive connection closed as soon as it falls idle, where Fastify alone closes
 * only those idle at the start and then waits out its 72 s keep-alive; after `graceMs` (ms) whatever
 * is left is cut. Resolves when the server is closed.
 */
export async function closeGracefully(app: FastifyInstance, graceMs: number): Promise<void> {
  const idle = setInterval(() => app.server.closeIdleConnections(), 50);
  const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearInterval(idle);
    clearTimeout(cut);
  }
}
