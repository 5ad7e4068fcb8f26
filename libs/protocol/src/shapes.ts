import type { EvidenceKind, Fields, Route } from "@baton/process";
import type { CheckVerdict } from "./check.ts";
import type { Decision, RunState } from "./tools.ts";

/**
 * The result shapes of tools.md ("Shared shapes" and each tool). These are the wire contract;
 * responses are validated against the official JSON Schemas in tests.
 */

/** An evidence item in run data (§5): file items carry `sha256`, and `url` wherever run data is returned. */
export interface EvidenceItem {
  kind: "file" | "link";
  ref: string;
  sha256?: string;
  url?: string;
}

/** One completion of a step, as kept current or in `history` (§3.1). */
export interface Completion {
  output?: Record<string, unknown>;
  evidence?: EvidenceItem[];
  summary?: string;
  next?: string;
  reason?: string;
  decision?: "approved" | "rejected" | "failed";
  note?: string;
  /** The check profile's verdict on this completion (check.md §3). */
  check?: CheckVerdict;
  by?: string;
  at?: string;
}

/** `data.steps.<id>` (§3.1): the current completion's fields plus `history`, oldest first. */
export interface StepData extends Completion {
  history: Completion[];
}

/** Run data (§3.1). */
export interface RunData {
  inputs: Record<string, unknown>;
  steps: Record<string, StepData>;
}

/** `run.ended` (§3.5). */
export interface Ended {
  by: string;
  at: string;
  note: string | null;
}

/** A step state (§3.5); `null` when the step is not currently reached. */
export type StepState = "ready" | "claimed" | "waiting" | "done" | "failed" | "cancelled";

/** `handoff` (§3.3): what the previous attempt at this step left behind. */
export interface Handoff {
  progress?: string;
  returned?: { note: string; by: string; at: string };
  issues?: string[];
  /** The verdict of a check that sent the submission back (check.md §3). */
  check?: CheckVerdict;
}

/** `workItems[].assignedTo` (tools.md). */
export type AssignedTo = { group: string } | { person: string };

/** `workItems[].escalation` (tools.md). */
export interface Escalation {
  note: string;
  by: string;
  at: string;
  /** The unsure verdict that escalated the step (check.md §3). */
  check?: CheckVerdict;
  /** The submission held while a person decides; `completed` without `output` uses it (tools.md). */
  candidate?: Completion;
}

/** A work item (§3.4, tools.md shared shapes). */
export interface WorkItem {
  id: string;
  stepId: string;
  kind: "agent" | "task" | "approve";
  text: string;
  output: Fields | null;
  evidence: EvidenceKind[] | null;
  next: Route[] | null;
  handoff: Handoff | null;
  assignedTo: AssignedTo;
  snapshot: string;
  due: string | null;
  escalation: Escalation | null;
  decide: {
    tool: "decide";
    arguments: { runId: string; workItemId: string; snapshot: string; requestId: string };
    decisions: Decision[];
  };
  mode?: "test";
}

/** One entry of the run view's `steps[]`. `due`/`overdue` appear on open steps that declare `due`. */
export interface StepView {
  id: string;
  kind: "agent" | "task" | "approve" | "wait" | "wait_until" | "wait_for" | "finish" | "parallel";
  state: StepState | null;
  due?: string;
  overdue?: boolean;
}

/** The run view (tools.md), returned by start_run, get_run, submit, decide, escalate, cancel. */
export interface RunView {
  run: {
    id: string;
    process: string;
    version: number;
    mode: "live" | "test";
    state: RunState;
    outcome: string | null;
    ended: Ended | null;
    startedBy: string;
    startedAt: string;
    updatedAt: string;
  };
  data: RunData;
  steps: StepView[];
  workItems: WorkItem[];
  body: string;
}

/** `claim.step` (tools.md claim). */
export interface ClaimedStep {
  id: string;
  instructions: string;
  output: Fields | null;
  evidence: EvidenceKind[] | null;
  next: Route[] | null;
}

/** The `claim` result (tools.md claim). */
export interface ClaimResult {
  token: string;
  expiresAt: string;
  mode: "live" | "test";
  step: ClaimedStep;
  handoff: Handoff | null;
  body: string;
  data: RunData;
  extensions?: Record<string, unknown>;
}

/** The `renew` result. */
export interface RenewResult {
  token: string;
  expiresAt: string;
}

/** The `upload` result. */
export interface UploadResult {
  id: string;
  sha256: string;
  bytes: number;
}

/** The `send_event` result. */
export interface SendEventResult {
  consumedBy: string | null;
}

/** A `get_work` item for an agent identity. */
export interface AgentWorkItem {
  runId: string;
  stepId: string;
  process: string;
  version: number;
  mode: "live" | "test";
  readySince: string;
  due: string | null;
  overdue: boolean;
  handoff: Handoff | null;
  claim: { tool: "claim"; arguments: { runId: string; stepId: string; requestId: string } };
}

/** A `get_work` item for a person. */
export interface PersonWorkItem {
  runId: string;
  process: string;
  version: number;
  mode: "live" | "test";
  workItem: WorkItem;
}

/** A paged list (`nextCursor` is `null` on the last page). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A `list_processes` item. */
export interface ProcessSummary {
  name: string;
  description: string;
  version: number;
  inputs: Fields;
  requires?: { systems: string[] };
}

/** A `list_runs` item. */
export interface RunSummary {
  id: string;
  process: string;
  version: number;
  state: RunState;
  outcome: string | null;
  startedAt: string;
  updatedAt: string;
  inputs: Record<string, unknown>;
}

/** The `describe` result (tools.md describe; `limits` per implementing.md Step 2 and check.md §5). */
export interface DescribeResult {
  protocol: "agentprocess";
  version: "core-2";
  profiles: string[];
  leaseSeconds: number;
  person: { format: "email" };
  tools: string[];
  maxUploadBytes: number;
  limits: {
    runDataBytes: number;
    checkPass: number;
    checkFail: number | null;
    checkConfidence: number;
    checkStateBytes: number;
  };
}

/** The placeholder a work item or get_work item puts where the caller fills a fresh UUID (tools.md). */
export const NEW_REQUEST_ID = "<new UUID>";
