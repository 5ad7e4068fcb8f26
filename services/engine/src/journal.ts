// A run's journal as the admin API reads it (issue #16): any identity of the run's organization.
import { type Bus, CONTRACTS, type JournalRead, type Subscription, serve } from "@baton/bus";
import { type Db, runJournal } from "@baton/db";
import type { Logger } from "@baton/kit";
import { fail, type Identity, type JournalPage, ok, protocolError, type ToolResult } from "@baton/protocol";
import { and, asc, eq, gt } from "drizzle-orm";

/**
 * Answers `engine.journal` (bus catalog {@link JournalRead}): the committed transitions of one run
 * in the caller's organization after `after`, oldest first, from PostgreSQL (ARCHITECTURE rule 6).
 * Any replica serves it: a write replies only after its commit, so a reader sees every transition it
 * was told about. A run of another organization, or none, is `not_found`.
 */
export async function readJournal(
  db: Db,
  who: Identity,
  query: JournalRead,
): Promise<ToolResult<JournalPage>> {
  const { runId, after = 0, limit = 200 } = query;
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
export function serveJournalReads(bus: Bus, db: Db, log: Logger): Subscription {
  return serve(bus, CONTRACTS.engineJournal, (query, env) => readJournal(db, env.identity, query), { log });
}
