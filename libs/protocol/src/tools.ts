import { z } from "zod";

/**
 * The argument schemas of the 14 tools (tools.md; `conformance/schemas/core-2/tools/*.arguments.json`).
 * Every object is strict: an argument the contract does not name is a schema break, so `invalid`
 * (checklist #16), before anything else is read (ARCHITECTURE "Check order on writes"). decide's
 * combination rules are not part of the schema: see {@link decideCombinationIssues}.
 */

const requestId = z.string().min(1).max(128);
const jsonObject = z.record(z.string(), z.unknown());

/** Evidence item as sent (§5): `{ kind, ref }`. The server adds `sha256` and `url` to file items. */
export const EvidenceItemArg = z.strictObject({
  kind: z.enum(["file", "link"]),
  ref: z.string().min(1),
});
export type EvidenceItemArg = z.infer<typeof EvidenceItemArg>;

export const DescribeArgs = z.strictObject({});
export type DescribeArgs = z.infer<typeof DescribeArgs>;

export const ListProcessesArgs = z.strictObject({ cursor: z.string().optional() });
export type ListProcessesArgs = z.infer<typeof ListProcessesArgs>;

export const StartRunArgs = z.strictObject({
  process: z.string(),
  version: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  inputs: jsonObject,
  mode: z.enum(["live", "test"]).optional(),
  requestId,
});
export type StartRunArgs = z.infer<typeof StartRunArgs>;

export const GetRunArgs = z.strictObject({ runId: z.string() });
export type GetRunArgs = z.infer<typeof GetRunArgs>;

export const GetWorkArgs = z.strictObject({
  limit: z.number().int().min(1).max(100).optional(),
  cursor: z.string().optional(),
  process: z.string().optional(),
});
export type GetWorkArgs = z.infer<typeof GetWorkArgs>;

export const ClaimArgs = z.strictObject({ runId: z.string(), stepId: z.string(), requestId });
export type ClaimArgs = z.infer<typeof ClaimArgs>;

export const RenewArgs = z.strictObject({
  token: z.string(),
  progress: z.string().max(4000).optional(),
  requestId,
});
export type RenewArgs = z.infer<typeof RenewArgs>;

export const UploadArgs = z.strictObject({
  fileName: z.string().min(1).max(255),
  contentType: z.string().min(1).max(160),
  contentBase64: z.string().min(1),
  requestId,
});
export type UploadArgs = z.infer<typeof UploadArgs>;

export const SubmitArgs = z.strictObject({
  token: z.string(),
  output: jsonObject,
  evidence: z.array(EvidenceItemArg).optional(),
  summary: z.string().max(2000),
  next: z.string().optional(),
  reason: z.string().max(4000).optional(),
  requestId,
});
export type SubmitArgs = z.infer<typeof SubmitArgs>;

export const EscalateArgs = z.strictObject({
  token: z.string(),
  note: z.string().max(4000),
  requestId,
});
export type EscalateArgs = z.infer<typeof EscalateArgs>;

export const DECISIONS = ["completed", "approved", "rejected", "returned", "failed"] as const;
export type Decision = (typeof DECISIONS)[number];

/**
 * tools.md decide: `next`/`reason` on any decision other than `completed` → `invalid`; `note` with
 * `completed` → `invalid`; `output`, `evidence` or `summary` with anything but `completed` → `invalid`;
 * `rejected`, `returned` and `failed` require `note` (a blank note says nothing, so it counts as missing).
 */
export const DecideArgs = z.strictObject({
  runId: z.string(),
  workItemId: z.string(),
  snapshot: z.string(),
  decision: z.enum(DECISIONS),
  output: jsonObject.optional(),
  evidence: z.array(EvidenceItemArg).optional(),
  summary: z.string().max(2000).optional(),
  next: z.string().optional(),
  reason: z.string().max(4000).optional(),
  note: z.string().max(4000).optional(),
  requestId,
});
export type DecideArgs = z.infer<typeof DecideArgs>;

/**
 * tools.md decide's combination rules, as `invalid` issues: `next`/`reason`, `output`, `evidence` and
 * `summary` only with `completed`; `note` not with `completed`; `rejected`, `returned` and `failed`
 * require a `note` (a blank one says nothing, so it counts as missing). The official argument schema
 * does not state them, so they are not a schema break: the engine applies them in the tool's own
 * order of checks, after `forbidden` and before `not_accepted`, so an ended run answers `run_ended`
 * first (§3.5).
 */
export function decideCombinationIssues(args: {
  decision: Decision;
  output?: unknown;
  evidence?: unknown;
  summary?: unknown;
  next?: unknown;
  reason?: unknown;
  note?: string | undefined;
}): string[] {
  const issues: string[] = [];
  if (args.decision !== "completed") {
    for (const key of ["next", "reason", "output", "evidence", "summary"] as const) {
      if (args[key] !== undefined)
        issues.push(`${key}: only with decision "completed", not "${args.decision}"`);
    }
  }
  if (args.decision === "completed" && args.note !== undefined) {
    issues.push('note: not with decision "completed"; put what you did in summary');
  }
  if (
    (args.decision === "rejected" || args.decision === "returned" || args.decision === "failed") &&
    (args.note === undefined || args.note.trim() === "")
  ) {
    issues.push(`note: required with decision "${args.decision}"`);
  }
  return issues;
}

export const CancelArgs = z.strictObject({ runId: z.string(), reason: z.string().max(4000), requestId });
export type CancelArgs = z.infer<typeof CancelArgs>;

export const SendEventArgs = z.strictObject({
  runId: z.string(),
  name: z.string(),
  data: jsonObject.optional(),
  requestId,
});
export type SendEventArgs = z.infer<typeof SendEventArgs>;

export const RUN_STATES = ["active", "waiting", "ended", "cancelled"] as const;
export type RunState = (typeof RUN_STATES)[number];

export const ListRunsArgs = z.strictObject({
  process: z.string().optional(),
  state: z.enum(RUN_STATES).optional(),
  inputs: jsonObject.optional(),
  limit: z.number().int().min(1).max(100).optional(),
  cursor: z.string().optional(),
});
export type ListRunsArgs = z.infer<typeof ListRunsArgs>;

/** Every tool of core-2, in the order §4.1 and §4.2 list them. */
export const TOOL_NAMES = [
  "describe",
  "list_processes",
  "start_run",
  "get_run",
  "get_work",
  "claim",
  "submit",
  "escalate",
  "decide",
  "cancel",
  "renew",
  "upload",
  "send_event",
  "list_runs",
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** Tool name → argument schema. */
export const TOOL_ARGS = {
  describe: DescribeArgs,
  list_processes: ListProcessesArgs,
  start_run: StartRunArgs,
  get_run: GetRunArgs,
  get_work: GetWorkArgs,
  claim: ClaimArgs,
  submit: SubmitArgs,
  escalate: EscalateArgs,
  decide: DecideArgs,
  cancel: CancelArgs,
  renew: RenewArgs,
  upload: UploadArgs,
  send_event: SendEventArgs,
  list_runs: ListRunsArgs,
} as const satisfies Record<ToolName, z.ZodType>;

/** Tool name → argument type. */
export interface ToolArgs {
  describe: DescribeArgs;
  list_processes: ListProcessesArgs;
  start_run: StartRunArgs;
  get_run: GetRunArgs;
  get_work: GetWorkArgs;
  claim: ClaimArgs;
  submit: SubmitArgs;
  escalate: EscalateArgs;
  decide: DecideArgs;
  cancel: CancelArgs;
  renew: RenewArgs;
  upload: UploadArgs;
  send_event: SendEventArgs;
  list_runs: ListRunsArgs;
}

/** Tools that change state, which are the tools that take `requestId` (§4). */
export const WRITE_TOOLS: ReadonlySet<ToolName> = new Set(
  TOOL_NAMES.filter((name) => "requestId" in TOOL_ARGS[name].shape),
);

/** One-line descriptions for the MCP tool list (§4.1, §4.2). */
export const TOOL_DESCRIPTIONS: Record<ToolName, string> = {
  describe:
    "Protocol version, profiles, lease seconds, person format, the tools this server offers and its limits.",
  list_processes:
    "Published processes: name, description, version number, inputs and required systems. Paged.",
  start_run: "Start a run of a published process with inputs. Returns the run view.",
  get_run: "The run view: run data, step states, open work items with a fresh snapshot. Never a token.",
  get_work:
    "For an agent: ready agent steps it may claim, each with the exact claim call. For a person: their open work items, each with the exact decide call. Oldest first, paged.",
  claim:
    "Claim a ready agent step: returns a token, its expiry, the step, the PROCESS.md body, the run data and the handoff.",
  submit:
    "Submit a claimed step: output, evidence, a summary, and the chosen next with a reason when next is a list.",
  escalate: "Hand a claimed step to a person with a note; the claim ends.",
  decide:
    "A person completes a work item: completed, approved, rejected, returned or failed, with the snapshot from the latest read.",
  cancel: "An operator cancels an active or waiting run with a reason.",
  renew:
    "Extend a claim's lease; returns a new token (the old one stops working) and optionally keeps a progress note.",
  upload: "Store a file (base64) and get its id and SHA-256, to cite as file evidence.",
  send_event:
    "Deliver a named event with optional data to a run; held until a matching wait_for step consumes it.",
  list_runs: "Runs of this organization, filtered by process, state and equality on input fields. Paged.",
};

/** A short human title per tool, for the MCP tool list (`title` and `annotations.title`). */
export const TOOL_TITLES: Record<ToolName, string> = {
  describe: "Describe the server",
  list_processes: "List processes",
  start_run: "Start a run",
  get_run: "Read a run",
  get_work: "Get work",
  claim: "Claim a step",
  submit: "Submit a step",
  escalate: "Escalate a step",
  decide: "Decide a work item",
  cancel: "Cancel a run",
  renew: "Renew a claim",
  upload: "Upload a file",
  send_event: "Send an event",
  list_runs: "List runs",
};

/**
 * MCP tool annotations (MCP `ToolAnnotations`) with every hint explicit: MCP's defaults for
 * `destructiveHint` and `openWorldHint` are `true`, so a hint left out would claim effects a tool
 * does not have. A runtime that gates tool calls by declared effects reads these.
 */
export interface ToolAnnotations {
  title: string;
  /** True for the reads: the tools without `requestId` (§4) change nothing. */
  readOnlyHint: boolean;
  /** True for the tools that can end a run by the caller's choice: `cancel` (§3.5) and `decide` (`failed`, `rejected`; §3.4). */
  destructiveHint: boolean;
  /** True for every tool: a write repeated with its `requestId` replays the original result and changes nothing (§4); a read changes nothing. */
  idempotentHint: boolean;
  /** False for every tool: each acts only on this server's own processes, runs and files. */
  openWorldHint: boolean;
}

/**
 * Tools whose call can end a run other than at a `finish` the process declares: `cancel` (§3.5: the
 * run is cancelled, its open work removed) and `decide` (§3.4: `failed` ends the run, `rejected`
 * without `on_reject` ends it `rejected`). Nothing else a caller sends undoes or ends work.
 */
export const DESTRUCTIVE_TOOLS: ReadonlySet<ToolName> = new Set<ToolName>(["cancel", "decide"]);

/** Tool name → its MCP annotations: reads are read-only, writes replay on `requestId` (§4), cancel and decide may end a run. */
export const TOOL_ANNOTATIONS: Record<ToolName, ToolAnnotations> = Object.fromEntries(
  TOOL_NAMES.map((name) => [
    name,
    {
      title: TOOL_TITLES[name],
      readOnlyHint: !WRITE_TOOLS.has(name),
      destructiveHint: DESTRUCTIVE_TOOLS.has(name),
      idempotentHint: true,
      openWorldHint: false,
    },
  ]),
) as Record<ToolName, ToolAnnotations>;

/**
 * Formats zod issues as the protocol's `issues` strings: `path: message`, one per problem, every
 * problem at once (§6 rule 3: "the caller gets every issue at once").
 */
export function formatArgIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const out: string[] = [];
  for (const issue of issues) {
    const path = issue.path
      .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
      .join("");
    switch (issue.code) {
      case "unrecognized_keys":
        for (const key of issue.keys)
          out.push(`${path ? `${path}.` : ""}${key}: not an argument of this tool`);
        break;
      case "invalid_type":
        if (issue.input === undefined) out.push(`${path}: required`);
        else
          out.push(
            `${path}: expected ${describeExpected(issue.expected)}, got ${describeInput(issue.input)}`,
          );
        break;
      case "too_small":
        out.push(
          `${path}: ${issue.origin === "string" ? `at least ${issue.minimum} characters` : issue.origin === "array" ? `at least ${issue.minimum} items` : `at least ${issue.minimum}`}`,
        );
        break;
      case "too_big":
        out.push(
          `${path}: ${issue.origin === "string" ? `at most ${issue.maximum} characters` : issue.origin === "array" ? `at most ${issue.maximum} items` : `at most ${issue.maximum}`}`,
        );
        break;
      case "invalid_value":
        out.push(`${path}: must be one of ${issue.values.map((v) => String(v)).join(", ")}`);
        break;
      default:
        out.push(`${path || "arguments"}: ${issue.message}`);
    }
  }
  return out;
}

function describeExpected(expected: string): string {
  switch (expected) {
    case "record":
      return "object";
    case "int":
      return "integer";
    default:
      return expected;
  }
}

function describeInput(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "array";
  if (typeof input === "number" && !Number.isInteger(input)) return "non-integer number";
  return typeof input;
}
