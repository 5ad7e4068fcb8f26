// The engine's PostgreSQL: runs, versions, idempotency records, and the one-statement commit.
import { SUBJECTS } from "@baton/bus";
import { type Db, idempotency, processVersions, rowsOf, runs } from "@baton/db";
import {
  type DomainEvent,
  indexRows,
  type PublishedProcess,
  pendingTimers,
  type ReadyStepRow,
  type Run,
  type WorkItemRow,
} from "@baton/engine";
import { activeTraceparent, commitStatements } from "@baton/kit";
import { iso, type Process } from "@baton/process";
import { partitionOf, type ToolResult } from "@baton/protocol";
import { and, desc, eq, sql } from "drizzle-orm";

/**
 * PostgreSQL access for the engine: one statement per transition (ARCHITECTURE rule 2) writing the
 * run row (compare-and-set on `rev`), its journal entry, the idempotency record, the derived indexes,
 * timers and outbox rows. Nothing else writes these tables (the scheduler only stamps its timer holds).
 */

/** A recorded result (§4): replayed for the same `requestId` and arguments. */
export interface IdempotencyRecord {
  tool: string;
  fingerprint: string;
  result: ToolResult<unknown>;
}

/** A transition to commit. `before` is null for a new run. */
export interface Transition {
  before: Run | null;
  after: Run;
  def: PublishedProcess;
  journal: { actor: string; actorKind: string; command: string; requestId: string | null; detail: unknown };
  idempotency: { requestId: string; tool: string; fingerprint: string; result: ToolResult<unknown> } | null;
  events: DomainEvent[];
  partitions: number;
  /**
   * Set for a `start_run` without a version, computed on the engine's cached latest version `def`:
   * the commit checks in the same statement that no later version was published (else
   * {@link StaleVersion}), so a start reads nothing before its one commit (issue #15).
   */
  latest?: boolean;
}

/** The commit found a record for this `requestId` already: nothing was written. */
export class IdempotencyConflict extends Error {
  override name = "IdempotencyConflict";
}

/** A later version of the process was published than the one a versionless `start_run` used: nothing was written. */
export class StaleVersion extends Error {
  override name = "StaleVersion";
}

/** Another writer changed the run since it was read (this replica lost the run's partition): nothing was written. */
export class FenceLost extends Error {
  override name = "FenceLost";
}

/** RFC 3339, or null for no time. */
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** A ready_steps row as `baton_commit` takes it (column names, RFC 3339 times). */
function readyRow(org: string, r: ReadyStepRow) {
  return {
    run_id: r.runId,
    step_id: r.stepId,
    org,
    process: r.process,
    version: r.version,
    mode: r.mode,
    ready_since: iso(r.readySince),
    due_at: isoOrNull(r.dueAt),
    lease_expires_at: isoOrNull(r.leaseExpiresAt),
    progress: r.progress,
    handoff: r.handoff,
  };
}

/** A work_items row as `baton_commit` takes it. */
function itemRow(org: string, r: WorkItemRow) {
  return {
    run_id: r.runId,
    work_item_id: r.workItemId,
    org,
    process: r.process,
    version: r.version,
    mode: r.mode,
    group_id: r.group,
    person: r.person,
    created_at: iso(r.createdAt),
    item: r.item,
  };
}

interface TimerRow {
  run_id: string;
  kind: string;
  step_id: string;
  org: string;
  partition: number;
  fire_at: string;
}

/** The rows a run derives (indexes and timers), keyed for diffing; their JSON, for comparing. */
interface Derived {
  ready: Map<string, string>;
  items: Map<string, string>;
  timers: Map<string, string>;
}

/**
 * The derived rows of each committed run, so the next transition diffs against them without
 * deriving the previous state again (the run objects are immutable once committed).
 */
const derivedOf = new WeakMap<Run, Derived>();

function derive(run: Run | null, def: PublishedProcess, partitions: number): Derived {
  const out: Derived = { ready: new Map(), items: new Map(), timers: new Map() };
  if (!run) return out;
  const cached = derivedOf.get(run);
  if (cached) return cached;
  const rows = indexRows(run, def);
  for (const r of rows.ready) out.ready.set(r.stepId, JSON.stringify(readyRow(run.org, r)));
  for (const r of rows.items) out.items.set(r.workItemId, JSON.stringify(itemRow(run.org, r)));
  const kindOf = (id: string) => def.process.steps.find((s) => s.id === id)?.kind;
  const partition = partitionOf(run.id, partitions);
  for (const t of pendingTimers(run, kindOf)) {
    const row: TimerRow = {
      run_id: run.id,
      kind: t.kind,
      step_id: t.stepId,
      org: run.org,
      partition,
      fire_at: iso(t.at),
    };
    out.timers.set(`${t.kind}/${t.stepId}`, JSON.stringify(row));
  }
  derivedOf.set(run, out);
  return out;
}

/** The rows to delete (keys gone) and upsert (new or changed) going from `old` to `cur`. */
function diff(old: Map<string, string>, cur: Map<string, string>): { gone: string[]; upsert: string[] } {
  const gone = [...old.keys()].filter((k) => !cur.has(k));
  const upsert = [...cur].filter(([k, v]) => old.get(k) !== v).map(([, v]) => v);
  return { gone, upsert };
}

/** Most transitions one group commit carries (a bound on one statement's size and time). */
export const GROUP_COMMIT_MAX = 64;

/** One transition waiting for its commit: its `baton_commit` argument as JSON text, and its caller. */
interface Queued {
  text: string;
  resolve(outcome: string): void;
  reject(error: unknown): void;
}

/**
 * Whether a failed statement certainly wrote nothing and said why: an SQL error of the statement
 * (a SQLSTATE outside connection exceptions, class 08, and operator intervention, class 57), as
 * opposed to a dropped connection, after which its commit may or may not have been applied.
 */
function statementRefused(error: unknown): boolean {
  const e = databaseError(error) as { code?: unknown; severity?: unknown };
  const code = e.code;
  // The server's error response (it has a severity), not a socket's (`EPIPE` is five letters too).
  return (
    typeof e.severity === "string" &&
    typeof code === "string" &&
    /^[0-9A-Z]{5}$/.test(code) &&
    !code.startsWith("08") &&
    !code.startsWith("57")
  );
}

/**
 * The database's own error inside what drizzle threw (its `cause`, with the SQLSTATE `code`), else
 * `error` itself. Drizzle's wrapper names the statement's parameters in its message: a transition's
 * whole payload, claim tokens in recorded results included, which must never reach a log.
 */
function databaseError(error: unknown): unknown {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    if (typeof (e as { code?: unknown }).code === "string") return e;
  }
  return error;
}

/** The engine's database operations. */
export class EngineStore {
  /** Transitions waiting for the next commit statement, in arrival order. */
  private queue: Queued[] = [];
  /** A drain is scheduled (for the check phase) or running: a new transition only joins the queue. */
  private committing = false;
  /** Commit statements sent and the transitions they carried, since start (the group commit's effect). */
  readonly sent = { statements: 0, transitions: 0 };

  constructor(private readonly db: Db) {}

  /** The run with `id`, or null. */
  async loadRun(id: string): Promise<Run | null> {
    const rows = await this.db.select({ doc: runs.doc }).from(runs).where(eq(runs.id, id));
    return (rows[0]?.doc as Run | undefined) ?? null;
  }

  /** A published version, or the latest when `version` is undefined; null when none. */
  async loadVersion(org: string, name: string, version?: number): Promise<PublishedProcess | null> {
    const where =
      version === undefined
        ? and(eq(processVersions.org, org), eq(processVersions.name, name))
        : and(
            eq(processVersions.org, org),
            eq(processVersions.name, name),
            eq(processVersions.version, version),
          );
    const rows = await this.db
      .select()
      .from(processVersions)
      .where(where)
      .orderBy(desc(processVersions.version))
      .limit(1);
    const row = rows[0];
    if (!row) return null;
    return {
      org: row.org,
      name: row.name,
      version: row.version,
      contentHash: row.contentHash,
      process: row.definition as Process,
      bindings: row.bindings,
    };
  }

  /**
   * Whether run `runId`'s journal holds a transition applied by a write with `requestId` (one that
   * was not refused): how a replay is recognised once its idempotency record is past the retention
   * window and pruned (issue #13). The journal is kept for ever.
   */
  async journalApplied(runId: string, requestId: string): Promise<boolean> {
    const rows = rowsOf<{ one: number }>(
      await this.db.execute(
        sql`select 1 as one from run_journal where run_id = ${runId} and request_id = ${requestId} and (detail->>'error') is null limit 1`,
      ),
    );
    return rows.length > 0;
  }

  /** The idempotency record of `requestId` in `org`, or null. */
  async getIdempotency(org: string, requestId: string): Promise<IdempotencyRecord | null> {
    const rows = await this.db
      .select({ tool: idempotency.tool, fingerprint: idempotency.fingerprint, result: idempotency.result })
      .from(idempotency)
      .where(and(eq(idempotency.org, org), eq(idempotency.requestId, requestId)));
    const row = rows[0];
    return row
      ? { tool: row.tool, fingerprint: row.fingerprint, result: row.result as ToolResult<unknown> }
      : null;
  }

  /**
   * Commits one transition in one statement, so one commit (ARCHITECTURE rule 2): `baton_commit`
   * (migration 0002) writes the idempotency record, the run row fenced by `rev`, the journal entry,
   * the index and timer changes and the outbox rows atomically (migration 0006 adds the latest-version
   * check). Throws {@link IdempotencyConflict} when the `requestId` is taken, {@link FenceLost} when
   * `before.rev` is no longer current (or a new run's id exists), and {@link StaleVersion} when
   * `t.latest` and a later version was published; in each case nothing was written.
   */
  async commit(t: Transition): Promise<void> {
    const { before, after, def } = t;
    const now = iso(after.updatedAt);
    const old = derive(before, def, t.partitions);
    const cur = derive(after, def, t.partitions);
    const ready = diff(old.ready, cur.ready);
    const items = diff(old.items, cur.items);
    const timerRows = diff(old.timers, cur.timers);
    const trace = activeTraceparent();
    const payload = {
      beforeRev: before ? before.rev : null,
      latest: t.latest ? { org: def.org, name: def.name, version: def.version } : null,
      run: {
        id: after.id,
        org: after.org,
        process: after.process,
        version: after.version,
        mode: after.mode,
        state: after.state,
        outcome: after.outcome,
        started_at: iso(after.startedAt),
        updated_at: now,
        inputs: after.data.inputs,
        snapshot: after.snapshot,
        rev: after.rev,
        partition: partitionOf(after.id, t.partitions),
        doc: after,
      },
      journal: {
        run_id: after.id,
        rev: after.rev,
        org: after.org,
        at: now,
        actor: t.journal.actor,
        actor_kind: t.journal.actorKind,
        command: t.journal.command,
        request_id: t.journal.requestId,
        process: after.process,
        version: after.version,
        content_hash: after.contentHash,
        detail: { ...(t.journal.detail as object), events: t.events },
      },
      idempotency: t.idempotency
        ? {
            org: after.org,
            request_id: t.idempotency.requestId,
            tool: t.idempotency.tool,
            fingerprint: t.idempotency.fingerprint,
            result: t.idempotency.result,
            created_at: now,
          }
        : null,
      readyDelete: ready.gone,
      itemsDelete: items.gone,
      timersDelete: timerRows.gone.map((key) => {
        const i = key.indexOf("/");
        return { kind: key.slice(0, i), step_id: key.slice(i + 1) };
      }),
      outbox: t.events.map((e) => ({
        org: e.org,
        subject: SUBJECTS.event(e.org, e.type),
        // With spans on, each event carries the transition's trace to the notifier (issue #13).
        payload: trace ? { ...e, trace } : e,
        created_at: now,
      })),
    };
    // The upserted rows are already JSON; splice them in rather than parse and serialize them again.
    const text = `${JSON.stringify(payload).slice(0, -1)},"readyUpsert":[${ready.upsert.join(",")}],"itemsUpsert":[${items.upsert.join(",")}],"timersUpsert":[${timerRows.upsert.join(",")}]}`;
    const outcome = await this.enqueue(text);
    if (outcome === "fence") throw new FenceLost();
    if (outcome === "idempotency_conflict") throw new IdempotencyConflict();
    if (outcome === "stale_version") throw new StaleVersion();
    if (outcome !== "ok") throw new Error(`baton_commit answered ${String(outcome)}`);
  }

  /**
   * Group commit (issue #15): when no commit is in flight, a transition is sent from the next check
   * phase of the event loop (`setImmediate`; the end of the iteration that made it, unless it was
   * made in a check phase), with every other transition made before then; those that arrive while a
   * commit is in flight wait for it to return. Each statement carries up to {@link GROUP_COMMIT_MAX}
   * transitions, several in one `baton_commit_many` (migration 0006): one round trip and one
   * PostgreSQL commit for all of them, each applied or refused on its own. Nothing changes for the
   * core or a reply: each caller still gets its own transition's outcome, after the commit that
   * holds it. Resolves to `ok`, `idempotency_conflict`, `stale_version` or `fence`; rejects when
   * the database failed (the commit's outcome unknown).
   */
  private enqueue(text: string): Promise<string> {
    return new Promise((resolve, reject) => {
      this.queue.push({ text, resolve, reject });
      if (!this.committing) {
        // The first commit of a burst waits for this iteration's check phase, so every transition
        // the iteration's callbacks make (the HTTP requests or NATS messages read in one poll) goes
        // in it. Without the wait the first went alone: in `baton dev`, when PGlite ran in this
        // event loop, nothing could queue behind it, and every transition was its own commit.
        this.committing = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, GROUP_COMMIT_MAX);
        await this.commitBatch(batch);
      }
    } finally {
      this.committing = false;
    }
  }

  private async commitBatch(batch: Queued[]): Promise<void> {
    this.sent.statements++;
    this.sent.transitions += batch.length;
    if (batch.length === 1) {
      const only = batch[0] as Queued;
      try {
        only.resolve(await this.commitOne(only.text));
      } catch (error) {
        only.reject(error);
      }
      return;
    }
    let outcomes: string[];
    try {
      commitStatements.inc();
      const result = await this.db.execute(
        sql`select baton_commit_many(${`[${batch.map((q) => q.text).join(",")}]`}::jsonb) as outcomes`,
      );
      outcomes = (rowsOf<{ outcomes: string[] }>(result)[0]?.outcomes ?? []) as string[];
    } catch (error) {
      // The statement wrote nothing: apply each alone, so one transition's error stays its own.
      if (statementRefused(error)) {
        for (const q of batch) {
          try {
            q.resolve(await this.commitOne(q.text));
          } catch (alone) {
            q.reject(alone);
          }
        }
        return;
      }
      for (const q of batch) q.reject(databaseError(error));
      return;
    }
    batch.forEach((q, i) => {
      const outcome = outcomes[i];
      if (typeof outcome === "string") q.resolve(outcome);
      else q.reject(new Error(`baton_commit_many answered ${outcomes.length} outcomes for ${batch.length}`));
    });
  }

  /** One transition's `baton_commit`: its outcome, `fence` for a lost fence (BT409). */
  private async commitOne(text: string): Promise<string> {
    try {
      commitStatements.inc();
      const result = await this.db.execute(sql`select baton_commit(${text}::jsonb) as outcome`);
      return String(rowsOf<{ outcome: string }>(result)[0]?.outcome);
    } catch (error) {
      if (isFenceLost(error)) return "fence";
      throw databaseError(error);
    }
  }
}

/** Whether a database error is `baton_commit`'s lost fence (SQLSTATE BT409), on `pg` or PGlite. */
function isFenceLost(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === "BT409") return true;
  }
  return false;
}
