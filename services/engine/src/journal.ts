// A run's journal as the admin API reads it (issue #16): any identity of the run's organization.
import { type Bus, type Envelope, QUEUES, SUBJECTS, type Subscription } from "@baton/bus";
import { type Db, runJournal } from "@baton/db";
import {
  fail,
  formatArgIssues,
  type JournalPage,
  JournalQuery,
  ok,
  protocolError,
  type ToolResult,
} from "@baton/protocol";
import { and, asc, eq, gt } from "drizzle-orm";

/**
 * Answers `engine.journal` (bus catalog {@link JournalQuery}): the committed transitions of one run
 * in the caller's organization after `after`, oldest first, from PostgreSQL (ARCHITECTURE rule 6).
 * Any replica serves it: a write replies only after its commit, so a reader sees every transition it
 * was told about. A run of another organization, or none, is `not_found`.
 */
export async function readJournal(db: Db, env: Envelope): Promise<ToolResult<JournalPage>> {
  const who = env.identity;
  if (!who) throw new Error("journal reads carry the caller's identity");
  const parsed = JournalQuery.safeParse(env.payload);
  if (!parsed.success) {
    return fail(protocolError("invalid", "bad journal query", formatArgIssues(parsed.error.issues)));
  }
  const { runId, after = 0, limit = 200 } = parsed.data;
  const rows = await db
    .select()
    .from(runJournal)
    .where(and(eq(runJournal.runId, runId), eq(runJournal.org, who.org), gt(runJournal.rev, after)))
    .orderBy(asc(runJournal.rev))
    .limit(limit + 1);
  // Every run has its start_run entry (rev 1), so an empty first page means no such run here.
  if (rows.length === 0 && after === 0) {
    return fail(protocolError("not_found", `no run ${runId} in your organization`));
  }
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return ok({
    runId,
    entries: page.map((r) => ({
      rev: r.rev,
      at: r.at.toISOString(),
      actor: r.actor,
      actorKind: r.actorKind,
      command: r.command,
      requestId: r.requestId,
      process: r.process,
      version: r.version,
      contentHash: r.contentHash,
      detail: r.detail as Record<string, unknown>,
    })),
    nextAfter: rows.length > limit && last ? last.rev : null,
  });
}

/** Serves `engine.journal` on the bus (queue `engine`) until stopped. */
export function serveJournalReads(bus: Bus, db: Db): Subscription {
  return bus.serve(SUBJECTS.engineJournal, (env) => readJournal(db, env), { queue: QUEUES.engine });
}
