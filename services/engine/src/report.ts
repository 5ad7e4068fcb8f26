// The check agreement report (issue #14): an organization's runs of one process, read from PostgreSQL and tallied.
import { type Bus, type CheckReportRead, CONTRACTS, type Subscription, serve } from "@baton/bus";
import { type Db, processVersions, runs } from "@baton/db";
import { AgreementTally, type Run } from "@baton/engine";
import type { Logger } from "@baton/kit";
import { type CheckReport, fail, type Identity, ok, protocolError, type ToolResult } from "@baton/protocol";
import { and, asc, eq, gt, gte, or, type SQL } from "drizzle-orm";

/** Runs read per statement: the tally keeps counts, never the runs, so memory stays flat however many there are. */
const PAGE = 100;

/**
 * Answers `engine.report` (bus catalog {@link CheckReportRead}): for an operator of the caller's
 * organization, the agreement of process `name`'s recorded check verdicts with its approvers'
 * decisions (`@baton/engine` {@link AgreementTally}; docs/check-report.md) over its live runs, oldest
 * first, keeping only verdicts recorded at or after `since`. Any replica serves it: every run's
 * committed document is in PostgreSQL. A person who is not an operator, or an agent, is `forbidden`; a
 * process the organization never published is `not_found`.
 */
export async function checkReport(
  db: Db,
  who: Identity,
  query: CheckReportRead,
): Promise<ToolResult<CheckReport>> {
  if (who.kind !== "person" || !who.operator) {
    return fail(protocolError("forbidden", "the check report is for operators"));
  }
  const published = await db
    .select({ version: processVersions.version })
    .from(processVersions)
    .where(and(eq(processVersions.org, who.org), eq(processVersions.name, query.name)))
    .limit(1);
  if (published.length === 0) {
    return fail(protocolError("not_found", `no published process ${query.name} in your organization`));
  }
  const since = query.since === undefined ? null : new Date(query.since);
  const tally = new AgreementTally(since === null ? null : since.getTime());
  let after: { startedAt: Date; id: string } | null = null;
  for (;;) {
    const filters: (SQL | undefined)[] = [
      eq(runs.org, who.org),
      eq(runs.process, query.name),
      eq(runs.mode, "live"),
      // A verdict recorded since then was written by a transition since then.
      since === null ? undefined : gte(runs.updatedAt, since),
      after === null
        ? undefined
        : or(
            gt(runs.startedAt, after.startedAt),
            and(eq(runs.startedAt, after.startedAt), gt(runs.id, after.id)),
          ),
    ];
    const page = await db
      .select({ id: runs.id, startedAt: runs.startedAt, doc: runs.doc })
      .from(runs)
      .where(and(...filters))
      .orderBy(asc(runs.startedAt), asc(runs.id))
      .limit(PAGE);
    for (const row of page) tally.add(row.doc as Run);
    const last = page.at(-1);
    if (page.length < PAGE || !last) break;
    after = { startedAt: last.startedAt, id: last.id };
  }
  return ok(tally.report(query.name, query.since ?? null));
}

/** Serves `engine.report` on the bus (queue `engine`) until stopped. */
export function serveCheckReports(bus: Bus, db: Db, log: Logger): Subscription {
  return serve(bus, CONTRACTS.engineReport, (query, env) => checkReport(db, env.identity, query), { log });
}
