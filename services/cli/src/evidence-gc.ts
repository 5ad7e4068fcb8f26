import type { GcPage } from "@baton/bus";
import { adminCall } from "./admin-api.ts";

/** The outcome of `baton evidence gc` over every page. */
export interface GcSummary {
  dryRun: boolean;
  examined: number;
  deleted: GcPage["deleted"];
  keptYoung: number;
  keptReferenced: number;
  intentsDropped: number;
}

/**
 * `baton evidence gc` (issue #10): walks every object of the operator's organization in the blob
 * store, a page at a time through `POST /api/evidence/gc`, and deletes (with `dryRun: false`) those no
 * file names and no upload intent younger than `olderThanMs` protects; in a dry run (the default of
 * the command) it only reports them. `onPage` sees each page as it comes. Throws the admin API's
 * refusal (`forbidden` without the operator role, `invalid` for an age under a minute).
 */
export async function collectOrphans(
  baseUrl: string,
  token: string,
  options: { olderThanMs: number; dryRun: boolean; pageSize?: number },
  onPage: (page: GcPage) => void = () => {},
): Promise<GcSummary> {
  const summary: GcSummary = {
    dryRun: options.dryRun,
    examined: 0,
    deleted: [],
    keptYoung: 0,
    keptReferenced: 0,
    intentsDropped: 0,
  };
  let cursor: string | null = null;
  do {
    const page: GcPage = await adminCall<GcPage>(
      { baseUrl, token },
      {
        method: "POST",
        path: "/api/evidence/gc",
        body: {
          olderThanMs: options.olderThanMs,
          dryRun: options.dryRun,
          cursor,
          limit: options.pageSize ?? 100,
        },
      },
    );
    onPage(page);
    summary.examined += page.examined;
    summary.deleted.push(...page.deleted);
    summary.keptYoung += page.keptYoung;
    summary.keptReferenced += page.keptReferenced;
    summary.intentsDropped += page.intentsDropped;
    cursor = page.cursor;
  } while (cursor !== null);
  return summary;
}

/** The last lines `baton evidence gc` prints. */
export function formatGcSummary(s: GcSummary): string {
  const bytes = s.deleted.reduce((n, d) => n + d.bytes, 0);
  const verb = s.dryRun ? "would delete" : "deleted";
  const lines = [
    `${s.examined} objects examined; ${verb} ${s.deleted.length} (${bytes} bytes); kept ${s.keptReferenced} cited by a file and ${s.keptYoung} younger than the age or being uploaded`,
  ];
  if (!s.dryRun && s.intentsDropped > 0) lines.push(`dropped ${s.intentsDropped} stale upload intents`);
  if (s.dryRun) lines.push("dry run: nothing was deleted; run again with --delete to delete them");
  return lines.join("\n");
}
