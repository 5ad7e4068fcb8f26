// The admin API's read endpoints (issue #16): published versions and a run's journal, for anyone in the organization.
import { type Bus, CheckReportRead, CONTRACTS, call, JournalRead, RegistryRead } from "@baton/bus";
import type { Logger } from "@baton/kit";
import {
  fail,
  formatArgIssues,
  type Identity,
  type JournalPage,
  protocolError,
  type ToolResult,
} from "@baton/protocol";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { FileLinks } from "./file-links.ts";
import { HTTP_STATUS } from "./status.ts";

/** What the read endpoints need from the HTTP server. */
export interface AdminReadDeps {
  bus: Bus;
  log: Logger;
  fileLinks: FileLinks;
  callTimeoutMs: number;
  /** The gateway's bearer check: the caller, or null after it answered 401. */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<{ identity: Identity } | null>;
}

/** One read endpoint's call: its query, checked at the edge by the contract's own schema, and how it is sent. */
interface Read<Q, T> {
  /** The subject's request schema: a query it refuses is `invalid` here, with every issue. */
  schema: z.ZodType<Q>;
  /** What the request asked, as read from its path and query string. */
  query: unknown;
  /** The message of a refused query (`bad version query`). */
  refused: string;
  send: (query: Q, as: { identity: Identity; deadline: number }) => Promise<ToolResult<T>>;
  /** Turns the answer's data into what the caller gets (file URLs). */
  shape?: (data: T, who: Identity) => T | Promise<T>;
}

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
 * And for an operator of the organization (issue #14):
 *
 * - `GET /api/processes/:name/check-report?since=<RFC 3339>` → `CheckReport`: how the process's
 *   recorded check verdicts agreed with its approvers' decisions (docs/check-report.md).
 *
 * Answers are `{ ok, data | error }` with the HTTP status of the error code; a bad parameter is
 * `invalid` with every issue.
 */
export function registerAdminReads(app: FastifyInstance, deps: AdminReadDeps): void {
  const { bus, log, fileLinks, callTimeoutMs, authenticate } = deps;

  async function forward<Q, T>(request: FastifyRequest, reply: FastifyReply, read: Read<Q, T>) {
    const auth = await authenticate(request, reply);
    if (!auth) return reply;
    const parsed = read.schema.safeParse(read.query);
    if (!parsed.success) {
      const refused = fail(protocolError("invalid", read.refused, formatArgIssues(parsed.error.issues)));
      return reply.code(400).send(refused);
    }
    let result: ToolResult<T>;
    try {
      result = await read.send(parsed.data, {
        identity: auth.identity,
        deadline: Date.now() + callTimeoutMs,
      });
    } catch (error) {
      log.warn({ err: String(error) }, "admin read failed");
      result = fail(protocolError("retry", "the server could not complete this call now; retry"));
    }
    if (!result.ok) return reply.code(HTTP_STATUS[result.error.code] ?? 400).send(result);
    const data = read.shape ? await read.shape(result.data, auth.identity) : result.data;
    return reply.send({ ok: true, data });
  }

  const versions = {
    schema: RegistryRead,
    refused: "bad version query",
    send: (query: RegistryRead, as: { identity: Identity; deadline: number }) =>
      call(bus, CONTRACTS.registryRead, query, as),
  };
  app.get<{ Params: { name: string } }>("/api/processes/:name/versions", (request, reply) =>
    forward(request, reply, { ...versions, query: { name: request.params.name } }),
  );
  app.get<{ Params: { name: string; version: string } }>(
    "/api/processes/:name/versions/:version",
    (request, reply) => {
      const { name, version } = request.params;
      return forward(request, reply, { ...versions, query: { name, version: whole(version) } });
    },
  );
  app.get<{ Params: { name: string }; Querystring: { since?: string } }>(
    "/api/processes/:name/check-report",
    (request, reply) => {
      const query: Record<string, unknown> = { name: request.params.name };
      if (request.query.since !== undefined) query.since = request.query.since;
      return forward(request, reply, {
        schema: CheckReportRead,
        query,
        refused: "bad check report query",
        send: (report, as) => call(bus, CONTRACTS.engineReport, report, as),
      });
    },
  );
  app.get<{ Params: { id: string }; Querystring: { after?: string; limit?: string } }>(
    "/api/runs/:id/journal",
    (request, reply) => {
      const q = request.query;
      const query: Record<string, unknown> = { runId: request.params.id };
      if (q.after !== undefined) query.after = whole(q.after);
      if (q.limit !== undefined) query.limit = whole(q.limit);
      return forward(request, reply, {
        schema: JournalRead,
        query,
        refused: "bad journal query",
        send: (journal, as) => call(bus, CONTRACTS.engineJournal, journal, as),
        shape: (page: JournalPage, who) => withFileUrls(page, who, fileLinks),
      });
    },
  );
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A file evidence item of a journal entry's arguments: `{ kind: "file", ref }`. */
const isFileItem = (e: unknown): e is Record<string, unknown> & { ref: string } =>
  isObject(e) && e.kind === "file" && typeof e.ref === "string";

/** Adds a short-lived `url` to each file evidence item of the journal's arguments (§5), as run data has. */
async function withFileUrls(page: JournalPage, who: Identity, fileLinks: FileLinks): Promise<JournalPage> {
  const argsOf = (entry: JournalPage["entries"][number]) => {
    const args = entry.detail.args;
    return isObject(args) && Array.isArray(args.evidence) ? { args, items: args.evidence } : null;
  };
  const refs = page.entries.flatMap((entry) =>
    (argsOf(entry)?.items ?? []).filter(isFileItem).map((e) => e.ref),
  );
  if (refs.length === 0) return page;
  const urls = await fileLinks.urls(who, refs);
  return {
    ...page,
    entries: page.entries.map((entry) => {
      const found = argsOf(entry);
      if (!found) return entry;
      const evidence = found.items.map((e) => (isFileItem(e) ? { ...e, url: urls.get(e.ref) } : e));
      return { ...entry, detail: { ...entry.detail, args: { ...found.args, evidence } } };
    }),
  };
}
