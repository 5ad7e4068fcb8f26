// Published versions as the admin API reads them (issue #16): any identity of the organization.
import { type Bus, CONTRACTS, type RegistryRead, type Subscription, serve } from "@baton/bus";
import { type Db, processVersions } from "@baton/db";
import type { Logger } from "@baton/kit";
import { type Process, parseProcess } from "@baton/process";
import {
  fail,
  type Identity,
  ok,
  protocolError,
  type ToolResult,
  type VersionDetail,
  type VersionList,
  type VersionSummary,
} from "@baton/protocol";
import { and, desc, eq } from "drizzle-orm";

type Row = Pick<
  typeof processVersions.$inferSelect,
  "name" | "version" | "contentHash" | "bindings" | "publishedBy" | "publishedAt"
>;

function summary(r: Row): VersionSummary {
  return {
    name: r.name,
    version: r.version,
    contentHash: r.contentHash,
    bindings: r.bindings,
    publishedBy: r.publishedBy,
    publishedAt: r.publishedAt.toISOString(),
  };
}

/**
 * Answers `registry.read` (bus catalog {@link RegistryRead}): every published version of a process
 * in the caller's organization, newest first, or one version with its source and parsed definition
 * (fields in declared order).
 * A process or version of another organization is `not_found`, never a hint that it exists.
 */
export async function readVersions(
  db: Db,
  who: Identity,
  query: RegistryRead,
): Promise<ToolResult<VersionList | VersionDetail>> {
  const { name, version } = query;
  const columns = {
    name: processVersions.name,
    version: processVersions.version,
    contentHash: processVersions.contentHash,
    bindings: processVersions.bindings,
    publishedBy: processVersions.publishedBy,
    publishedAt: processVersions.publishedAt,
  };
  const ofProcess = and(eq(processVersions.org, who.org), eq(processVersions.name, name));
  if (version === undefined) {
    const rows = await db
      .select(columns)
      .from(processVersions)
      .where(ofProcess)
      .orderBy(desc(processVersions.version));
    if (rows.length === 0) return fail(protocolError("not_found", `no process ${name} in your organization`));
    return ok({ name, versions: rows.map(summary) });
  }
  const rows = await db
    .select({ ...columns, source: processVersions.source, definition: processVersions.definition })
    .from(processVersions)
    .where(and(ofProcess, eq(processVersions.version, version)));
  const row = rows[0];
  if (!row) return fail(protocolError("not_found", `no version ${version} of ${name} in your organization`));
  // Parsed again from the file: the stored definition is jsonb, which keeps no key order, and a
  // person reads fields in the order they were declared (the console's forms and maps).
  const reparsed = parseProcess(row.source);
  const definition = reparsed.ok ? reparsed.process : (row.definition as Process);
  return ok({ ...summary(row), source: row.source, definition });
}

/** Serves `registry.read` on the bus (queue `registry`) until stopped. */
export function serveVersionReads(bus: Bus, db: Db, log: Logger): Subscription {
  return serve(bus, CONTRACTS.registryRead, (query, env) => readVersions(db, env.identity, query), { log });
}
