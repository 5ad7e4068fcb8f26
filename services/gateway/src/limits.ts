import type { ToolName } from "@baton/protocol";

/**
 * Limits on what a caller sends (issue #12), checked at the gateway before anything crosses the bus,
 * beyond the tool schemas' own bounds (`requestId` ≤ 128, `summary` ≤ 2,000, `note`/`reason`/
 * `progress` ≤ 4,000, `fileName` ≤ 255, `contentType` ≤ 160 characters; `limit` ≤ 100). Each is a
 * server limit, not a schema rule: breaking one is `invalid` with an issue naming the argument and
 * the limit, never `retry` (a later identical call could not get past it, §4.3). docs/security.md
 * lists them all with their values.
 */

/** Characters an id-like argument may hold (run, step and work-item ids, snapshots, tokens, cursors, names). */
export const MAX_ID_CHARS = 1_024;

/** Evidence items one `submit` or `decide` may cite. */
export const MAX_EVIDENCE_ITEMS = 100;

/** Fields one object in a call's arguments may have (inputs, output, event data, and objects inside). */
export const MAX_FIELDS = 5_000;

/** Characters a key of an object in a call's arguments may hold. */
export const MAX_KEY_CHARS = 1_024;

/** Bytes of an admin API body (a PROCESS.md source travels in one); 512 KiB, well under NATS's 1 MB. */
export const MAX_ADMIN_BODY_BYTES = 512 * 1024;

/**
 * Bytes of a tool call's body, for every tool but `upload` (whose bytes never cross the bus): twice
 * `limits.runDataBytes` (512 KiB by default), room for run-data-sized inputs or output with every
 * other argument, and well under NATS's 1 MB message cap (ARCHITECTURE "Bytes never cross NATS").
 */
export const maxCallBytes = (runDataBytes: number) => 2 * runDataBytes;

/** The id-like arguments of each tool, checked against {@link MAX_ID_CHARS}. */
const ID_ARGUMENTS: Partial<Record<ToolName, readonly string[]>> = {
  list_processes: ["cursor"],
  start_run: ["process"],
  get_run: ["runId"],
  get_work: ["cursor", "process"],
  claim: ["runId", "stepId"],
  renew: ["token"],
  submit: ["token", "next"],
  escalate: ["token"],
  decide: ["runId", "workItemId", "snapshot", "next"],
  cancel: ["runId"],
  send_event: ["runId", "name"],
  list_runs: ["process", "cursor"],
};

/**
 * The limit problems of a call of `tool` whose arguments `args` passed the tool's schema, and whose
 * body was `bodyBytes` bytes: issue strings (`runId: at most 1024 characters (server limit)`).
 */
export function callLimitProblems(
  tool: ToolName,
  args: Record<string, unknown>,
  bodyBytes: number,
  runDataBytes: number,
): string[] {
  const issues: string[] = [];
  const cap = maxCallBytes(runDataBytes);
  if (tool !== "upload" && bodyBytes > cap) {
    issues.push(
      `arguments: ${bodyBytes} bytes, over the ${cap} bytes a ${tool} call may carry (twice describe.limits.runDataBytes; server limit)`,
    );
  }
  for (const name of ID_ARGUMENTS[tool] ?? []) {
    const value = args[name];
    if (typeof value === "string" && value.length > MAX_ID_CHARS)
      issues.push(`${name}: at most ${MAX_ID_CHARS} characters (server limit)`);
  }
  const evidence = args.evidence;
  if (Array.isArray(evidence)) {
    if (evidence.length > MAX_EVIDENCE_ITEMS)
      issues.push(`evidence: at most ${MAX_EVIDENCE_ITEMS} items (server limit)`);
    evidence.slice(0, MAX_EVIDENCE_ITEMS).forEach((item: unknown, i) => {
      // Read before the schema's verdict counts: an item may be anything (`null`, a number).
      if (item === null || typeof item !== "object") return;
      const ref = (item as { ref?: unknown }).ref;
      if (typeof ref === "string" && ref.length > MAX_ID_CHARS)
        issues.push(`evidence[${i}].ref: at most ${MAX_ID_CHARS} characters (server limit)`);
    });
  }
  return issues;
}
