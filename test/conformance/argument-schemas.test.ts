import { argumentProblems, SCHEMA_PATCHES } from "@baton/conformance/schemas";
import { decideCombinationIssues, TOOL_ARGS, type ToolName } from "@baton/protocol";
import { describe, expect, it } from "vitest";

/**
 * Baton's argument schemas (`libs/protocol` TOOL_ARGS, which decide `invalid`) accept exactly what the
 * official argument schemas accept, once the patches of `conformance/schema-deviations.md` are
 * applied (ARCHITECTURE "Contracts once"; tools.md wins over a schema). Each row is a call a client
 * could make; both must agree on whether it breaks the tool's schema.
 */

const long = (n: number) => "x".repeat(n);
const id = { requestId: "r-1" };

const SAMPLES: [ToolName, Record<string, unknown>, boolean][] = [
  ["describe", {}, true],
  ["describe", { verbose: true }, false],
  ["list_processes", {}, true],
  ["list_processes", { cursor: "abc" }, true],
  ["list_processes", { cursor: 1 }, false],
  ["start_run", { process: "p", inputs: {}, ...id }, true],
  ["start_run", { process: "p", inputs: { a: [1, { b: null }] }, version: 3, mode: "test", ...id }, true],
  ["start_run", { process: "p", inputs: {}, version: 0, ...id }, false],
  ["start_run", { process: "p", inputs: {}, version: 1.5, ...id }, false],
  ["start_run", { process: "p", inputs: {}, mode: "dry", ...id }, false],
  ["start_run", { process: "p", inputs: [], ...id }, false],
  ["start_run", { process: "p", ...id }, false],
  ["start_run", { process: "p", inputs: {}, requestId: "" }, false],
  ["start_run", { process: "p", inputs: {}, requestId: long(129) }, false],
  ["start_run", { process: "p", inputs: {}, requestId: long(128) }, true],
  ["start_run", { process: "p", inputs: {}, extra: 1, ...id }, false],
  ["get_run", { runId: "r" }, true],
  ["get_run", {}, false],
  ["get_work", {}, true],
  ["get_work", { limit: 1, cursor: "c", process: "p" }, true],
  ["get_work", { limit: 100 }, true],
  ["get_work", { limit: 0 }, false],
  ["get_work", { limit: 101 }, false],
  ["get_work", { limit: 2.5 }, false],
  ["claim", { runId: "r", stepId: "s", ...id }, true],
  ["claim", { runId: "r", ...id }, false],
  ["renew", { token: "t", ...id }, true],
  ["renew", { token: "t", progress: long(4000), ...id }, true],
  ["renew", { token: "t", progress: long(4001), ...id }, false],
  ["upload", { fileName: "a.txt", contentType: "text/plain", contentBase64: "YQ==", ...id }, true],
  ["upload", { fileName: "", contentType: "text/plain", contentBase64: "YQ==", ...id }, false],
  ["upload", { fileName: "a.txt", contentType: "text/plain", contentBase64: "", ...id }, false],
  ["submit", { token: "t", output: {}, summary: "Did it.", ...id }, true],
  // D2: an empty summary passes the schema and is refused by acceptance ("summary: missing").
  ["submit", { token: "t", output: {}, summary: "", ...id }, true],
  ["submit", { token: "t", output: {}, summary: long(2001), ...id }, false],
  ["submit", { token: "t", output: {}, ...id }, false],
  [
    "submit",
    {
      token: "t",
      output: {},
      summary: "s",
      evidence: [{ kind: "link", ref: "x" }],
      next: "a",
      reason: "b",
      ...id,
    },
    true,
  ],
  ["submit", { token: "t", output: {}, summary: "s", evidence: [{ kind: "file", ref: "" }], ...id }, false],
  ["submit", { token: "t", output: {}, summary: "s", evidence: [{ kind: "pdf", ref: "x" }], ...id }, false],
  [
    "submit",
    { token: "t", output: {}, summary: "s", evidence: [{ kind: "file", ref: "f", sha256: "x" }], ...id },
    false,
  ],
  ["escalate", { token: "t", note: "Stuck.", ...id }, true],
  ["escalate", { token: "t", ...id }, false],
  ["cancel", { runId: "r", reason: "Why.", ...id }, true],
  ["cancel", { runId: "r", ...id }, false],
  ["send_event", { runId: "r", name: "n", ...id }, true],
  ["send_event", { runId: "r", name: "n", data: { a: 1 }, ...id }, true],
  ["send_event", { runId: "r", name: "n", data: [1], ...id }, false],
  ["list_runs", {}, true],
  ["list_runs", { process: "p", state: "ended", inputs: { a: 1 }, limit: 5, cursor: "c" }, true],
  ["list_runs", { state: "done" }, false],
  ["list_runs", { limit: 0 }, false],
];

const decide = (extra: Record<string, unknown>) => ({
  runId: "r",
  workItemId: "w_1",
  snapshot: "s",
  ...id,
  ...extra,
});

/**
 * tools.md decide's combination rules: not part of the official argument schema (D1), so both accept
 * every combination; the engine refuses the forbidden ones as `invalid` after `forbidden` (tools.md's order).
 * Each row: arguments, schema-valid, allowed by the combination rules.
 */
const DECIDE: [Record<string, unknown>, boolean, boolean][] = [
  [decide({ decision: "completed" }), true, true],
  [
    decide({
      decision: "completed",
      output: { a: 1 },
      evidence: [{ kind: "link", ref: "x" }],
      summary: "s",
      next: "n",
      reason: "r",
    }),
    true,
    true,
  ],
  [decide({ decision: "completed", note: "n" }), true, false],
  [decide({ decision: "approved" }), true, true],
  [decide({ decision: "approved", note: "Fine." }), true, true],
  [decide({ decision: "approved", next: "n" }), true, false],
  [decide({ decision: "approved", reason: "r" }), true, false],
  [decide({ decision: "approved", output: {} }), true, false],
  [decide({ decision: "approved", evidence: [] }), true, false],
  [decide({ decision: "approved", summary: "s" }), true, false],
  [decide({ decision: "rejected", note: "Why." }), true, true],
  [decide({ decision: "rejected" }), true, false],
  [decide({ decision: "rejected", note: "  " }), true, false],
  [decide({ decision: "rejected", note: "Why.", next: "n", reason: "r" }), true, false],
  [decide({ decision: "returned", note: "Try again." }), true, true],
  [decide({ decision: "returned" }), true, false],
  [decide({ decision: "failed", note: "Stop." }), true, true],
  [decide({ decision: "failed", note: "Stop.", output: {} }), true, false],
  [decide({ decision: "withdrawn", note: "x" }), false, false],
  [{ runId: "r", workItemId: "w", decision: "approved", ...id }, false, true],
];

describe("argument schemas agree with the official ones under the listed deviations (conformance/schema-deviations.md)", () => {
  it.each(SAMPLES)("%s %j → valid %s", (tool, args, valid) => {
    expect(argumentProblems(tool, args).length === 0).toBe(valid);
    expect(TOOL_ARGS[tool].safeParse(args).success).toBe(valid);
  });

  it.each(DECIDE)("decide %j → schema-valid %s, combination allowed %s (D1)", (args, valid, allowed) => {
    expect(argumentProblems("decide", args).length === 0).toBe(valid);
    const parsed = TOOL_ARGS.decide.safeParse(args);
    expect(parsed.success).toBe(valid);
    if (parsed.success) expect(decideCombinationIssues(parsed.data).length === 0).toBe(allowed);
  });

  it("patches exactly the schemas the deviations list names", () => {
    expect(
      Object.entries(SCHEMA_PATCHES).map(([schemaId, p]) => [schemaId.split("/core-2/")[1], p.deviation]),
    ).toEqual([]);
  });
});
