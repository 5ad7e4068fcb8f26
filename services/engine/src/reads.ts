// The engine's reads: a run's view from memory or PostgreSQL, and cross-run reads from the indexes.
import type { CONTRACTS, EngineRead, Envelope, HandlerReply } from "@baton/bus";
import type { Clock } from "@baton/clock";
import { type Db, readySteps, runs, workItems } from "@baton/db";
import { agentWorkItem, type EngineConfig, runAt, runView, withSnapshot } from "@baton/engine";
import {
  type AgentWorkItem,
  fail,
  type GetWorkArgs,
  type Handoff,
  type Identity,
  type ListRunsArgs,
  ok,
  type Page,
  type PersonWorkItem,
  type ProtocolError,
  protocolError,
  type RunSummary,
  type WorkItem,
} from "@baton/protocol";
import { and, asc, eq, inArray, isNull, lte, or, type SQL, sql } from "drizzle-orm";
import type { RunCache } from "./run-cache.ts";
import type { EngineStore } from "./store.ts";

/** What the reads need. */
export interface ReadDeps {
  db: Db;
  store: EngineStore;
  cache: RunCache;
  clock: Clock;
  settings: EngineConfig;
}

/**
 * Answers `engine.read` on any replica: `get_run` (the run view at the clock's now, from this
 * replica's memory when it holds the run, else PostgreSQL: a write replies only after its commit),
 * `get_work` and `list_runs` (from the indexes). Another organization's run is `not_found`.
 */
export function createReads(deps: ReadDeps): {
  read(env: Envelope<EngineRead>): Promise<HandlerReply<typeof CONTRACTS.engineRead>>;
} {
  const { db, store, cache, clock, settings } = deps;
  return {
    async read(env) {
      const who = env.identity;
      if (!who) throw new Error("engine reads carry the caller's identity");
      const p = env.payload;
      const now = clock.now();
      switch (p.tool) {
        case "get_run": {
          const run = cache.peek(p.args.runId) ?? (await store.loadRun(p.args.runId));
          if (!run || run.org !== who.org)
            return fail(protocolError("not_found", `no run ${p.args.runId} in your organization`));
          const def = await cache.version(run.org, run.process, run.version);
          return ok(runView(runAt(run, def, settings, now), def, now));
        }
        case "get_work": {
          const page =
            who.kind === "agent"
              ? await agentWork(db, who, p.args, now)
              : await personWork(db, who, p.args, settings.operatorGroup);
          return "code" in page ? fail(page) : ok(page);
        }
        case "list_runs": {
          const page = await listRuns(db, who, p.args);
          return "code" in page ? fail(page) : ok(page);
        }
        default: {
          const unreachable: never = p;
          throw new Error(`unknown read ${JSON.stringify(unreachable)}`);
        }
      }
    },
  };
}

/**
 * Cross-run reads, served by any engine replica from PostgreSQL indexes (ARCHITECTURE rule 5).
 * Cursors are opaque to clients: base64url JSON of the last item's sort key.
 */

function encodeCursor(key: unknown[]): string {
  return Buffer.from(JSON.stringify(key), "utf8").toString("base64url");
}

function decodeCursor(cursor: string | undefined, arity: number): unknown[] | null | ProtocolError {
  if (cursor === undefined) return null;
  try {
    const key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    // Every cursor Baton issues is [an RFC 3339 time, …ids]; anything else was not issued here.
    const wellFormed =
      Array.isArray(key) &&
      key.length === arity &&
      key.every((k) => typeof k === "string") &&
      !Number.isNaN(Date.parse(key[0] as string));
    if (wellFormed) return key;
  } catch {
    // falls through to the refusal below
  }
  return protocolError("invalid", "cursor was not issued by this server", [
    "cursor: pass nextCursor from the previous page unchanged",
  ]);
}

/**
 * A page of `rows` (fetched `limit + 1`, so one more says there is a next page): the first `limit`
 * as items, and the cursor of the last one's sort key when there are more.
 */
function pageOf<R, T>(rows: R[], limit: number, item: (row: R) => T, key: (row: R) => string[]): Page<T> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page.map(item), nextCursor: rows.length > limit && last ? encodeCursor(key(last)) : null };
}

const isError = (v: unknown): v is ProtocolError => typeof v === "object" && v !== null && "code" in v;

/**
 * `get_work` for an agent (tools.md get_work): ready agent steps of the caller's organization (and
 * claimed ones whose lease has ended at `now`), oldest `readySince` first, `limit` per page.
 */
export async function agentWork(
  db: Db,
  who: Identity,
  args: GetWorkArgs,
  now: number,
): Promise<Page<AgentWorkItem> | ProtocolError> {
  const limit = args.limit ?? 20;
  const cursor = decodeCursor(args.cursor, 3);
  if (isError(cursor)) return cursor;
  const nowDate = new Date(now);
  const conds: (SQL | undefined)[] = [
    eq(readySteps.org, who.org),
    or(isNull(readySteps.leaseExpiresAt), lte(readySteps.leaseExpiresAt, nowDate)),
  ];
  if (args.process !== undefined) conds.push(eq(readySteps.process, args.process));
  if (cursor) {
    const [since, runId, stepId] = cursor as [string, string, string];
    conds.push(
      sql`(${readySteps.readySince}, ${readySteps.runId}, ${readySteps.stepId}) > (${new Date(since)}, ${runId}, ${stepId})`,
    );
  }
  const rows = await db
    .select()
    .from(readySteps)
    .where(and(...conds))
    .orderBy(asc(readySteps.readySince), asc(readySteps.runId), asc(readySteps.stepId))
    .limit(limit + 1);
  return pageOf(
    rows,
    limit,
    (r): AgentWorkItem =>
      agentWorkItem(
        {
          runId: r.runId,
          stepId: r.stepId,
          process: r.process,
          version: r.version,
          mode: r.mode as "live" | "test",
          readySince: r.readySince.getTime(),
          dueAt: r.dueAt ? r.dueAt.getTime() : null,
          leaseExpiresAt: r.leaseExpiresAt ? r.leaseExpiresAt.getTime() : null,
          progress: r.progress,
          handoff: (r.handoff as Handoff | null) ?? null,
        },
        now,
      ),
    (last) => [last.readySince.toISOString(), last.runId, last.stepId],
  );
}

/**
 * `get_work` for a person (tools.md get_work, §3.4): open work items assigned to one of the caller's
 * groups or to the caller, plus the operator queue for operators; oldest first. Each item carries the
 * run's current snapshot.
 */
export async function personWork(
  db: Db,
  who: Identity,
  args: GetWorkArgs,
  operatorGroup: string,
): Promise<Page<PersonWorkItem> | ProtocolError> {
  const limit = args.limit ?? 20;
  const cursor = decodeCursor(args.cursor, 3);
  if (isError(cursor)) return cursor;
  const groups = who.operator ? [...new Set([...who.groups, operatorGroup])] : who.groups;
  const mine: SQL[] = [eq(workItems.person, who.id.toLowerCase())];
  if (groups.length > 0) mine.push(inArray(workItems.groupId, groups));
  const conds: (SQL | undefined)[] = [eq(workItems.org, who.org), or(...mine)];
  if (args.process !== undefined) conds.push(eq(workItems.process, args.process));
  if (cursor) {
    const [created, runId, itemId] = cursor as [string, string, string];
    conds.push(
      sql`(${workItems.createdAt}, ${workItems.runId}, ${workItems.workItemId}) > (${new Date(created)}, ${runId}, ${itemId})`,
    );
  }
  const rows = await db
    .select({
      runId: workItems.runId,
      workItemId: workItems.workItemId,
      process: workItems.process,
      version: workItems.version,
      mode: workItems.mode,
      createdAt: workItems.createdAt,
      item: workItems.item,
      snapshot: runs.snapshot,
    })
    .from(workItems)
    .innerJoin(runs, eq(runs.id, workItems.runId))
    .where(and(...conds))
    .orderBy(asc(workItems.createdAt), asc(workItems.runId), asc(workItems.workItemId))
    .limit(limit + 1);
  return pageOf(
    rows,
    limit,
    (r): PersonWorkItem => ({
      runId: r.runId,
      process: r.process,
      version: r.version,
      mode: r.mode as "live" | "test",
      workItem: withSnapshot(r.item as WorkItem, r.snapshot),
    }),
    (last) => [last.createdAt.toISOString(), last.runId, last.workItemId],
  );
}

/**
 * `list_runs` (tools.md list_runs): the organization's runs, newest first, filtered by process, state
 * and equality on each given input field (JSON equality: `1` equals `1.0`, objects compare by value).
 */
export async function listRuns(
  db: Db,
  who: Identity,
  args: ListRunsArgs,
): Promise<Page<RunSummary> | ProtocolError> {
  const limit = args.limit ?? 20;
  const cursor = decodeCursor(args.cursor, 2);
  if (isError(cursor)) return cursor;
  const conds: (SQL | undefined)[] = [eq(runs.org, who.org)];
  if (args.process !== undefined) conds.push(eq(runs.process, args.process));
  if (args.state !== undefined) conds.push(eq(runs.state, args.state));
  for (const [field, value] of Object.entries(args.inputs ?? {})) {
    conds.push(sql`${runs.inputs} -> ${field} = ${JSON.stringify(value)}::jsonb`);
  }
  if (cursor) {
    const [started, id] = cursor as [string, string];
    conds.push(sql`(${runs.startedAt}, ${runs.id}) < (${new Date(started)}, ${id})`);
  }
  const rows = await db
    .select({
      id: runs.id,
      process: runs.process,
      version: runs.version,
      state: runs.state,
      outcome: runs.outcome,
      startedAt: runs.startedAt,
      updatedAt: runs.updatedAt,
      inputs: runs.inputs,
    })
    .from(runs)
    .where(and(...conds))
    .orderBy(sql`${runs.startedAt} desc`, sql`${runs.id} desc`)
    .limit(limit + 1);
  return pageOf(
    rows,
    limit,
    (r): RunSummary => ({
      id: r.id,
      process: r.process,
      version: r.version,
      state: r.state as RunSummary["state"],
      outcome: r.outcome,
      startedAt: r.startedAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
      inputs: r.inputs,
    }),
    (last) => [last.startedAt.toISOString(), last.id],
  );
}
