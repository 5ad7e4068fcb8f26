import { type AgentStep, iso, type Route, type Step, type TaskStep } from "@baton/process";
import {
  type AgentWorkItem,
  type ClaimedStep,
  type ClaimResult,
  type Decision,
  type Handoff,
  NEW_REQUEST_ID,
  type RunView,
  type StepView,
  type WorkItem,
} from "@baton/protocol";
import { routesOf } from "./acceptance.ts";
import type { CommandContext } from "./commands.ts";
import { decisionsOf } from "./machine.ts";
import type { EngineConfig, PublishedProcess, Run, WorkItemState } from "./run.ts";
import { snapshotOf } from "./snapshot.ts";
import { applyDueTimers } from "./timers.ts";
import type { Tx } from "./transitions.ts";

/**
 * Projections of a run onto the tool contracts' shapes (tools.md "Shared shapes"). File `url`s are not
 * added here: the shell adds them to every response, since they are short-lived and never part of
 * the snapshot.
 */

/**
 * The run as of `now`: timers due by then applied (leases ended, waits passed, overdue marked), without
 * committing anything. Reads use this so a view never shows a lease that has ended.
 */
export function runAt(run: Run, def: PublishedProcess, config: EngineConfig, now: number): Run {
  const tx: Tx = {
    run: structuredClone(run),
    ctx: { actor: { kind: "server" }, now, def, config } satisfies CommandContext,
    events: [],
    dataChanged: false,
  };
  const fired = applyDueTimers(tx, now);
  if (fired === 0) return run;
  if (tx.dataChanged) {
    // Recompute the snapshot exactly as a committed transition would.
    tx.run.snapshot = snapshotOf(tx.run.data);
  }
  return tx.run;
}

/** The instructions of a step: the value of its kind key for agent, task and approve. */
function textOf(step: Step): string {
  return step.kind === "agent" || step.kind === "task" || step.kind === "approve" ? step.instructions : "";
}

function requirements(def: PublishedProcess, step: Step): Pick<WorkItem, "output" | "evidence" | "next"> {
  if (step.kind === "agent" || step.kind === "task") {
    return { output: step.output ?? {}, evidence: step.evidence ?? [], next: routesOf(def, step) };
  }
  return { output: null, evidence: null, next: null };
}

/** The work item shape (tools.md "Shared shapes"), with the given snapshot. */
export function workItemView(
  run: Run,
  def: PublishedProcess,
  item: WorkItemState,
  snapshot: string,
): WorkItem {
  const step = def.process.steps.find((s) => s.id === item.stepId);
  if (!step) throw new Error(`work item ${item.id} names unknown step ${item.stepId}`);
  const r = run.steps[item.stepId];
  const view: WorkItem = {
    id: item.id,
    stepId: item.stepId,
    kind: item.kind,
    text: textOf(step),
    ...requirements(def, step),
    handoff: r?.handoff ?? null,
    assignedTo: item.assignedTo,
    snapshot,
    due: r?.dueAt != null ? iso(r.dueAt) : null,
    escalation: item.kind === "agent" || item.escalated ? (r?.escalation ?? null) : null,
    decide: {
      tool: "decide",
      arguments: { runId: run.id, workItemId: item.id, snapshot, requestId: NEW_REQUEST_ID },
      decisions: decisionsOf(item) as Decision[],
    },
  };
  if (run.mode === "test") view.mode = "test";
  return view;
}

/** `steps[]` of the run view: every step of the pinned version in file order. */
function stepViews(run: Run, def: PublishedProcess, now: number): StepView[] {
  return def.process.steps.map((step) => {
    const r = run.steps[step.id];
    const state = r?.state ?? null;
    const view: StepView = { id: step.id, kind: step.kind, state };
    const open = state === "ready" || state === "claimed" || state === "waiting";
    if (open && r?.dueAt != null) {
      view.due = iso(r.dueAt);
      view.overdue = now >= r.dueAt;
    }
    return view;
  });
}

/** The run view (tools.md), as of `now` (apply {@link runAt} first). */
export function runView(run: Run, def: PublishedProcess, now: number): RunView {
  return {
    run: {
      id: run.id,
      process: run.process,
      version: run.version,
      mode: run.mode,
      state: run.state,
      outcome: run.outcome,
      ended: run.ended,
      startedBy: run.startedBy,
      startedAt: iso(run.startedAt),
      updatedAt: iso(run.updatedAt),
    },
    data: run.data,
    steps: stepViews(run, def, now),
    workItems: run.workItems.map((w) => workItemView(run, def, w, run.snapshot)),
    body: def.process.body,
  };
}

/** `claim.step` (tools.md claim): instructions and the requirements exactly as declared. */
export function claimedStep(def: PublishedProcess, step: AgentStep | TaskStep): ClaimedStep {
  return {
    id: step.id,
    instructions: step.instructions,
    output: step.output ?? {},
    evidence: step.evidence ?? [],
    next: routesOf(def, step) as Route[] | null,
  };
}

/**
 * The `claim` result (tools.md claim) for a claim the core granted: `token` is minted by the shell
 * from `(runId, claimId)` (ARCHITECTURE "Claim tokens"); everything else comes from the run as the
 * claim left it. `mode` says whether this is a test run (§3.3).
 */
export function claimResult(
  run: Run,
  def: PublishedProcess,
  claim: { stepId: string; expiresAt: number },
  token: string,
): ClaimResult {
  const step = def.process.steps.find((s) => s.id === claim.stepId);
  if (step?.kind !== "agent") throw new Error(`claim on ${claim.stepId}, which is not an agent step`);
  return {
    token,
    expiresAt: iso(claim.expiresAt),
    mode: run.mode,
    step: claimedStep(def, step),
    handoff: handoffOf(run, claim.stepId),
    body: def.process.body,
    data: run.data,
  };
}

/** The handoff of a step (§3.3), `null` on a first attempt. */
export function handoffOf(run: Run, stepId: string): Handoff | null {
  return run.steps[stepId]?.handoff ?? null;
}

/**
 * A `get_work` item for an agent (tools.md get_work) from a row of the ready-steps index, as of
 * `now`. A row whose lease has ended by `now` is claimable (§3.3: "claimable immediately"); if the
 * lease end is not committed yet, its progress note is handed over here exactly as the lease timer
 * will record it (`handoff.progress`), so the item does not depend on when the timer is applied.
 */
export function agentWorkItem(row: ReadyStepRow, now: number): AgentWorkItem {
  const leaseEnded = row.leaseExpiresAt !== null && row.leaseExpiresAt <= now;
  const handoff =
    leaseEnded && row.progress !== null ? { ...(row.handoff ?? {}), progress: row.progress } : row.handoff;
  const item: AgentWorkItem = {
    runId: row.runId,
    stepId: row.stepId,
    process: row.process,
    version: row.version,
    mode: row.mode,
    readySince: iso(row.readySince),
    due: row.dueAt !== null ? iso(row.dueAt) : null,
    overdue: row.dueAt !== null && now >= row.dueAt,
    handoff,
    claim: { tool: "claim", arguments: { runId: row.runId, stepId: row.stepId, requestId: NEW_REQUEST_ID } },
  };
  return item;
}

/**
 * A row of the ready-agent-steps index (ARCHITECTURE rule 5: cross-run reads from PostgreSQL
 * indexes): every agent step that is ready, or claimed with a lease that may end. `get_work` lists a
 * row when `leaseExpiresAt` is null or has passed. Times are epoch ms.
 */
export interface ReadyStepRow {
  runId: string;
  stepId: string;
  process: string;
  version: number;
  mode: "live" | "test";
  /** When the current attempt became ready (not reset by a lease end or `returned`). */
  readySince: number;
  dueAt: number | null;
  leaseExpiresAt: number | null;
  /** The live claim's latest `renew.progress`, handed over if its lease ends. */
  progress: string | null;
  handoff: Handoff | null;
}

/** A row of the open-work-items index: the work item without its snapshot (filled at read time). */
export interface WorkItemRow {
  runId: string;
  workItemId: string;
  process: string;
  version: number;
  mode: "live" | "test";
  group: string | null;
  person: string | null;
  createdAt: number;
  /** The work item with `snapshot` fields left empty. */
  item: WorkItem;
}

/** The index rows a run contributes (derived state; the shell keeps the tables equal to this). */
export function indexRows(run: Run, def: PublishedProcess): { ready: ReadyStepRow[]; items: WorkItemRow[] } {
  const ready: ReadyStepRow[] = [];
  for (const step of def.process.steps) {
    if (step.kind !== "agent") continue;
    const r = run.steps[step.id];
    if (!r || (r.state !== "ready" && r.state !== "claimed") || r.readySince === null) continue;
    ready.push({
      runId: run.id,
      stepId: step.id,
      process: run.process,
      version: run.version,
      mode: run.mode,
      readySince: r.readySince,
      dueAt: r.dueAt,
      leaseExpiresAt: r.claim?.expiresAt ?? null,
      progress: r.claim ? r.progress : null,
      handoff: r.handoff,
    });
  }
  const items: WorkItemRow[] = run.workItems.map((w) => ({
    runId: run.id,
    workItemId: w.id,
    process: run.process,
    version: run.version,
    mode: run.mode,
    group: "group" in w.assignedTo ? w.assignedTo.group : null,
    person: "person" in w.assignedTo ? w.assignedTo.person.toLowerCase() : null,
    createdAt: w.createdAt,
    item: workItemView(run, def, w, ""),
  }));
  return { ready, items };
}

/** Fills a stored work item's snapshot fields with the run's current snapshot. */
export function withSnapshot(item: WorkItem, snapshot: string): WorkItem {
  return { ...item, snapshot, decide: { ...item.decide, arguments: { ...item.decide.arguments, snapshot } } };
}
