import type { Process } from "@baton/process";
import type { AssignedTo, Ended, Escalation, Handoff, RunData, RunState, StepState } from "@baton/protocol";

/**
 * The persisted state of one run: run data (§3.1) plus the runtime the protocol implies but does not
 * show in run data (claims, leases, work items, held events, clocks). Stored as one JSON document per
 * run, fenced by `rev` (ARCHITECTURE rule 5). Times are epoch milliseconds inside the engine; the views
 * render them as RFC 3339 strings.
 */
export interface Run {
  id: string;
  org: string;
  process: string;
  version: number;
  /** The pinned version's content hash (§6 rule 5), recorded in the journal with every transition. */
  contentHash: string;
  mode: "live" | "test";
  state: RunState;
  outcome: string | null;
  ended: Ended | null;
  /** `sub` of the identity that started the run. */
  startedBy: string;
  startedByKind: "agent" | "person";
  /** The person who started the run (§3.4 `initiator`); `null` for a run an agent started. */
  initiator: string | null;
  startedAt: number;
  updatedAt: number;
  /** Incremented by every committed transition; the compare-and-set fence. */
  rev: number;
  data: RunData;
  /** Runtime of every step of the pinned version, keyed by step id. */
  steps: Record<string, StepRuntime>;
  /** Open work items, oldest first (§3.4). */
  workItems: WorkItemState[];
  /** Ids of work items that were decided on this run, so a second decision is `already_decided`. */
  decidedItems: string[];
  /** Events delivered before a matching wait was ready, oldest first (§3.6). */
  heldEvents: HeldEvent[];
  /** Monotonic counter for per-run ids (`w_<n>`, `c<n>`) and the order steps became reached. */
  seq: number;
  /** SHA-256 of the canonical run data (ARCHITECTURE "Snapshot"); recomputed whenever data changes. */
  snapshot: string;
}

/** The runtime of one step. */
export interface StepRuntime {
  state: StepState | null;
  /** Order in which the step was last reached (a fresh attempt); drives rework (§3.1). */
  enteredSeq: number | null;
  /**
   * The same order, kept when rework rewinds the step (its `enteredSeq` becomes null), so a later
   * rejection into it still knows which completions came after it. Absent in runs stored before it.
   */
  lastEnteredSeq?: number | null;
  /** When the current attempt became ready (agent steps) or waiting (others), epoch ms. */
  readySince: number | null;
  /** When `due` passes for the current attempt, epoch ms (§2.2 `due`). */
  dueAt: number | null;
  /** The overdue event for this attempt has been emitted (issue: emitted once per attempt). */
  overdueNotified: boolean;
  /** The live claim, if any (§3.3). */
  claim: ClaimState | null;
  /** The latest `renew.progress` of the live claim (§3.3). */
  progress: string | null;
  /** What the previous attempt left behind (§3.3); `null` on a first attempt. */
  handoff: Handoff | null;
  /** Set while an agent step waits on a person after `escalate` (tools.md escalate). */
  escalation: Escalation | null;
  /** When a wait, wait_until or wait_for timeout fires, epoch ms. */
  fireAt: number | null;
}

/** A live claim. The token carries `runId` + `id` under an HMAC (ARCHITECTURE "Claim tokens"). */
export interface ClaimState {
  id: string;
  by: string;
  expiresAt: number;
}

/** An open work item (§3.4). */
export interface WorkItemState {
  id: string;
  stepId: string;
  kind: "agent" | "task" | "approve";
  assignedTo: AssignedTo;
  createdAt: number;
}

/** An event held for a later `wait_for` (§3.6). */
export interface HeldEvent {
  name: string;
  data: Record<string, unknown>;
  by: string;
  at: number;
}

/** A published process version as the engine needs it. Immutable (§6 rule 5). */
export interface PublishedProcess {
  org: string;
  name: string;
  version: number;
  contentHash: string;
  process: Process;
  /** Role name → group id, fixed at publication (§3.4, §7). */
  bindings: Record<string, string>;
}

/** Server settings the engine applies. */
export interface EngineConfig {
  /** Claim lease length in ms (`describe.leaseSeconds` × 1000). */
  leaseMs: number;
  /** `describe.limits.runDataBytes`: the cap on run data, inputs at start and held event data (§6 rule 3). */
  runDataBytes: number;
  /** The group id escalated agent steps are assigned to: the operator queue (§3.3). */
  operatorGroup: string;
}
