// The admin API's read endpoints (issue #16): published versions and a run's journal, for anyone in the organization.
import type { FileUrls } from "@baton/auth";
import {
  type Bus,
  envelope,
  type JournalRead,
  type RegistryRead,
  requestWithRetry,
  SUBJECTS,
} from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Logger } from "@baton/kit";
import {
  type ErrorCode,
  fail,
  type Identity,
  type JournalPage,
  protocolError,
  type ToolResult,
} from "@baton/protocol";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** What the read endpoints need from the HTTP server. */
export interface AdminReadDeps {
  bus: Bus;
  clock: Clock;
  log: Logger;
  fileUrls: FileUrls;
  callTimeoutMs: number;
  /** The gateway's bearer check: the caller, or null after it answered 401. */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<{ identity: Identity } | null>;
}

const STATUS: Record<ErrorCode, number> = {
  invalid: 400,
  not_accepted: 422,
  stale: 409,
  conflict: 409,
  forbidden: 403,
  not_found: 404,
  retry: 503,
};

/** A path or query value that should be a whole number: the number, else the text (the schema refuses it). */
const whole = (value: string | undefined): number | string | undefined =>
  value === undefined ? undefined : /^\d{1,10}$/.test(value) ? Number(value) : value;

/**
 * Registers, for any identity of the organization (issue #16: "readable by anyone in the
 * organization"; another organization's process or run is `not_found`):
 *
 * - `GET /api/processes/:name/versions` → `VersionList`: every published version, newest first, with
 *   content hash, bindings, who published it and when.
 * - `GET /api/processes/:name/versions/:version` → `VersionDetail`: one version with its PROCESS.md
 *   source and parsed definition (what the console draws the map from).
 * - `GET /api/runs/:id/journal?after=<rev>&limit=<1–500>` → `JournalPage`: the run's committed
 *   transitions, oldest first, with a short-lived `url` on each file evidence item (§5).
 *
 * Answers are `{ ok, data | error }` with the HTTP status of the error code; a bad parameter is
 * `invalid` with every issue.
 */
export function registerAdminReads(app: FastifyInstance, deps: AdminReadDeps): void {
  const { bus, clock, log, fileUrls, callTimeoutMs, authenticate } = deps;

  async function forward<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    subject: string,
    payload: (who: Identity) => unknown,
    shape: (data: T, who: Identity) => T = (data) => data,
  ) {
    const auth = await authenticate(request, reply);
    if (!auth) return reply;
    const deadline = Date.now() + callTimeoutMs;
    let result: ToolResult<T>;
    try {
      result = (await requestWithRetry(
        bus,
        subject,
        envelope(subject, auth.identity, payload(auth.identity), deadline),
        deadline,
      )) as ToolResult<T>;
    } catch (error) {
      log.warn({ subject, err: String(error) }, "admin read failed");
      result = fail(protocolError("retry", "the server could not complete this call now; retry"));
    }
    if (!result.ok) return reply.code(STATUS[result.error.code] ?? 400).send(result);
    return reply.send({ ok: true, data: shape(result.data, auth.identity) });
  }

  app.get("/api/processes/:name/versions", (request, reply) => {
    const { name } = request.params as { name: string };
    return forward(request, reply, SUBJECTS.registryRead, () => ({ name }) satisfies RegistryRead);
  });
  app.get("/api/processes/:name/versions/:version", (request, reply) => {
    const { name, version } = request.params as { name: string; version: string };
    return forward(request, reply, SUBJECTS.registryRead, () => ({ name, version: whole(version) }));
  });
  app.get("/api/runs/:id/journal", (request, reply) => {
    const { id } = request.params as { id: string };
    const q = request.query as { after?: string; limit?: string };
    return forward<JournalPage>(
      request,
      reply,
      SUBJECTS.engineJournal,
      () => {
        const query: Record<string, unknown> = { runId: id };
        if (q.after !== undefined) query.after = whole(q.after);
        if (q.limit !== undefined) query.limit = whole(q.limit);
        return query satisfies Partial<Record<keyof JournalRead, unknown>>;
      },
      (page, who) => withFileUrls(page, who.org, fileUrls, clock.now()),
    );
  });
}

/** Adds a signed `url` to each file evidence item of the journal's arguments (§5), as run data has. */
function withFileUrls(page: JournalPage, org: string, fileUrls: FileUrls, now: number): JournalPage {
  return {
    ...page,
    entries: page.entries.map((entry) => {
      const args = entry.detail.args as { evidence?: unknown } | undefined;
      if (!args || !Array.isArray(args.evidence)) return entry;
      const evidence = args.evidence.map((e: { kind?: unknown; ref?: unknown }) =>
        e && e.kind === "file" && typeof e.ref === "string"
          ? { ...e, url: fileUrls.sign(org, e.ref, now) }
          : e,
      );
      return { ...entry, detail: { ...entry.detail, args: { ...args, evidence } } };
    }),
  };
}
