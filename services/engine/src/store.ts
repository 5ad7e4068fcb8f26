import { SUBJECTS } from "@baton/bus";
import {
  type Db,
  idempotency,
  outbox,
  processVersions,
  readySteps,
  runJournal,
  runs,
  timers,
  workItems,
} from "@baton/db";
import {
  type DomainEvent,
  indexRows,
  type PublishedProcess,
  pendingTimers,
  type ReadyStepRow,
  type Run,
  type WorkItemRow,
} from "@baton/engine";
import type { Process } from "@baton/process";
import { partitionOf, type ToolResult } from "@baton/protocol";
import { and, desc, eq } from "drizzle-orm";

/**
 * PostgreSQL access for the engine: one transaction per transition (ARCHITECTURE rule 2) holding the
 * run row (compare-and-set on `rev`), its journal entry, the idempotency record, the derived indexes,
 * timers and outbox rows. Nothing else writes these tables.
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
}

/** The commit found a record for this `requestId` already: nothing was written. */
export class IdempotencyConflict extends Error {
  override name = "IdempotencyConflict";
}

/** Another writer changed the run since it was read (a lost partition lease): nothing was written. */
export class FenceLost extends Error {
  override name = "FenceLost";
}

const at = (ms: number | null) => (ms === null ? null : new Date(ms));

function readyRow(org: string, r: ReadyStepRow) {
  return {
    runId: r.runId,
    stepId: r.stepId,
    org,
    process: r.process,
    version: r.version,
    mode: r.mode,
    readySince: new Date(r.readySince),
    dueAt: at(r.dueAt),
    leaseExpiresAt: at(r.leaseExpiresAt),
    progress: r.progress,
    handoff: r.handoff,
  };
}

function itemRow(org: string, r: WorkItemRow) {
  return {
    runId: r.runId,
    workItemId: r.workItemId,
    org,
    process: r.process,
    version: r.version,
    mode: r.mode,
    groupId: r.group,
    person: r.person,
    createdAt: new Date(r.createdAt),
    item: r.item,
  };
}

/** Derived rows of a run, keyed for diffing. */
function derived(run: Run | null, def: PublishedProcess) {
  const ready = new Map<string, ReturnType<typeof readyRow>>();
  const items = new Map<string, ReturnType<typeof itemRow>>();
  const timerRows = new Map<
    string,
    { runId: string; kind: string; stepId: string; org: string; fireAt: Date }
  >();
  if (run) {
    const rows = indexRows(run, def);
    for (const r of rows.ready) ready.set(r.stepId, readyRow(run.org, r));
    for (const r of rows.items) items.set(r.workItemId, itemRow(run.org, r));
    const kindOf = (id: string) => def.process.steps.find((s) => s.id === id)?.kind;
    for (const t of pendingTimers(run, kindOf)) {
      timerRows.set(`${t.kind}/${t.stepId}`, {
        runId: run.id,
        kind: t.kind,
        stepId: t.stepId,
        org: run.org,
        fireAt: new Date(t.at),
      });
    }
  }
  return { ready, items, timerRows };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The engine's database operations. */
export class EngineStore {
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
   * Commits one transition in one transaction. Throws {@link IdempotencyConflict} when the
   * `requestId` is taken and {@link FenceLost} when `before.rev` is no longer current; in both cases
   * nothing was written.
   */
  async commit(t: Transition): Promise<void> {
    const { before, after, def } = t;
    const now = new Date(after.updatedAt);
    await this.db.transaction(async (tx) => {
      if (t.idempotency) {
        const inserted = await tx
          .insert(idempotency)
          .values({
            org: after.org,
            requestId: t.idempotency.requestId,
            tool: t.idempotency.tool,
            fingerprint: t.idempotency.fingerprint,
            result: t.idempotency.result,
            createdAt: now,
          })
          .onConflictDoNothing()
          .returning({ requestId: idempotency.requestId });
        if (inserted.length === 0) throw new IdempotencyConflict();
      }
      const row = {
        state: after.state,
        outcome: after.outcome,
        updatedAt: now,
        snapshot: after.snapshot,
        rev: after.rev,
        doc: after,
      };
      if (before === null) {
        await tx.insert(runs).values({
          id: after.id,
          org: after.org,
          process: after.process,
          version: after.version,
          mode: after.mode,
          startedAt: new Date(after.startedAt),
          inputs: after.data.inputs,
          partition: partitionOf(after.id, t.partitions),
          ...row,
        });
      } else {
        const updated = await tx
          .update(runs)
          .set(row)
          .where(and(eq(runs.id, after.id), eq(runs.rev, before.rev)))
          .returning({ id: runs.id });
        if (updated.length === 0) throw new FenceLost();
      }
      await tx.insert(runJournal).values({
        runId: after.id,
        rev: after.rev,
        org: after.org,
        at: now,
        actor: t.journal.actor,
        actorKind: t.journal.actorKind,
        command: t.journal.command,
        requestId: t.journal.requestId,
        process: after.process,
        version: after.version,
        contentHash: after.contentHash,
        detail: { ...(t.journal.detail as object), events: t.events },
      });

      const old = derived(before, def);
      const cur = derived(after, def);
      for (const [key, row] of old.ready) {
        if (!cur.ready.has(key))
          await tx
            .delete(readySteps)
            .where(and(eq(readySteps.runId, after.id), eq(readySteps.stepId, row.stepId)));
      }
      for (const [key, row] of cur.ready) {
        const prev = old.ready.get(key);
        if (!prev) await tx.insert(readySteps).values(row);
        else if (!same(prev, row)) {
          await tx
            .update(readySteps)
            .set(row)
            .where(and(eq(readySteps.runId, after.id), eq(readySteps.stepId, row.stepId)));
        }
      }
      for (const [key, row] of old.items) {
        if (!cur.items.has(key)) {
          await tx
            .delete(workItems)
            .where(and(eq(workItems.runId, after.id), eq(workItems.workItemId, row.workItemId)));
        }
      }
      for (const [key, row] of cur.items) {
        const prev = old.items.get(key);
        if (!prev) await tx.insert(workItems).values(row);
        else if (!same(prev, row)) {
          await tx
            .update(workItems)
            .set(row)
            .where(and(eq(workItems.runId, after.id), eq(workItems.workItemId, row.workItemId)));
        }
      }
      const partition = partitionOf(after.id, t.partitions);
      for (const [key, row] of old.timerRows) {
        if (!cur.timerRows.has(key)) {
          await tx
            .delete(timers)
            .where(and(eq(timers.runId, after.id), eq(timers.kind, row.kind), eq(timers.stepId, row.stepId)));
        }
      }
      for (const [key, row] of cur.timerRows) {
        const prev = old.timerRows.get(key);
        if (!prev) await tx.insert(timers).values({ ...row, partition });
        else if (prev.fireAt.getTime() !== row.fireAt.getTime()) {
          await tx
            .update(timers)
            .set({ fireAt: row.fireAt })
            .where(and(eq(timers.runId, after.id), eq(timers.kind, row.kind), eq(timers.stepId, row.stepId)));
        }
      }
      if (t.events.length > 0) {
        await tx.insert(outbox).values(
          t.events.map((e) => ({
            org: e.org,
            subject: SUBJECTS.event(e.org, e.type),
            payload: e,
            createdAt: now,
          })),
        );
      }
    });
  }
}
