import type { Process } from "@baton/process";
import type {
  AssignedTo,
  CheckVerdict,
  Ended,
  Escalation,
  Handoff,
  RunData,
  RunState,
  StepState,
} from "@baton/protocol";

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
  /**
   * A parallel step's branch entries that reached `join` in the current fork (parallel.md §3): the
   * step joins when every entry is here. Absent on other steps and in runs stored before it.
   */
  joined?: string[];
  /**
   * Set while an unsure verdict waits on a person (check.md §3: "run data shows it as
   * `steps.<id>.check` even if the step completed before"): the `check` the step's record held
   * before the verdict was laid over it (`null`: none), restored when the person decides.
   */
  checkOverlay?: { previous: CheckVerdict | null } | null;
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
  /**
   * An escalation of a task step (check.md §3: a check unsure about a person's task submission
   * escalates the step "exactly as escalate does"): decided like an escalated agent step, with
   * `returned`, `completed` or `failed`. An escalated agent step is recognised by its kind.
   */
  escalated?: boolean;
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
  /** The check profile's server defaults (check.md §5); {@link DEFAULT_CHECK_LIMITS} when absent. */
  check?: CheckLimits;
}

/** check.md §5 `describe.limits`: the thresholds a question leaves out, and the run data shown. */
export interface CheckLimits {
  /** `checkPass`: a yes/no answer at or above it passes. */
  pass: number;
  /** `checkFail`: a yes/no answer below it fails (between it and `pass`: unsure); null = none. */
  fail: number | null;
  /** `checkConfidence`: a choice or rubric answer below it is unsure. */
  confidence: number;
  /** `checkStateBytes`: the most run data the evaluator is shown, bytes of canonical JSON. */
  stateBytes: number;
}
