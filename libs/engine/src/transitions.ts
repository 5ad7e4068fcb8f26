import {
  type ApproveStep,
  branchMembership,
  iso,
  isPersonValue,
  parseDateTime,
  parseDuration,
  type Step,
  stepById,
  stepNext,
  type TaskStep,
} from "@baton/process";
import type { AssignedTo, CheckVerdict, Completion, Ended, StepData } from "@baton/protocol";
import type { CommandContext, DomainEvent } from "./commands.ts";
import type { Run, StepRuntime, WorkItemState } from "./run.ts";
import { jsonBytes, snapshotOf } from "./snapshot.ts";

/**
 * The automatic transitions of §3: what happens when a step is reached, completes, is rejected into
 * `on_reject`, fails, and when the run ends. Functions here mutate the working copy held by a
 * {@link Tx}; `apply` (machine.ts) clones the run first, so callers never see a half-applied state.
 */

/** The working copy of one command's application. */
export interface Tx {
  run: Run;
  ctx: CommandContext;
  events: DomainEvent[];
  /** Run data changed: recompute the snapshot before returning. */
  dataChanged: boolean;
  /** The timers applied in this transition, in the order they fired (the journal records them). */
  fired?: { kind: string; stepId: string; at: number }[];
}

/** A fresh runtime for a step that is not reached. */
export function emptyRuntime(): StepRuntime {
  return {
    state: null,
    enteredSeq: null,
    readySince: null,
    dueAt: null,
    overdueNotified: false,
    claim: null,
    progress: null,
    handoff: null,
    escalation: null,
    fireAt: null,
  };
}

/** The runtime of `stepId`, created on first use. */
export function rt(tx: Tx, stepId: string): StepRuntime {
  let r = tx.run.steps[stepId];
  if (!r) {
    r = emptyRuntime();
    tx.run.steps[stepId] = r;
  }
  return r;
}

/** The step definition; the run's pinned version always has it (ids come from the process itself). */
export function stepOf(tx: Tx, stepId: string): Step {
  const step = stepById(tx.ctx.def.process, stepId);
  if (!step) throw new Error(`step ${stepId} is not in ${tx.ctx.def.name} v${tx.ctx.def.version}`);
  return step;
}

function emit(
  tx: Tx,
  type: DomainEvent["type"],
  at: number,
  stepId?: string,
  detail?: Record<string, unknown>,
) {
  const event: DomainEvent = { type, runId: tx.run.id, org: tx.run.org, mode: tx.run.mode, at };
  if (stepId !== undefined) event.stepId = stepId;
  if (detail !== undefined) event.detail = detail;
  tx.events.push(event);
}

function nextSeq(tx: Tx): number {
  tx.run.seq += 1;
  return tx.run.seq;
}

/** A new per-run id: `w_<n>` for work items, `c<n>` for claims. */
export function newId(tx: Tx, prefix: "w_" | "c"): string {
  return `${prefix}${nextSeq(tx)}`;
}

/** The record of a step in run data, created on first use with an empty history. */
function stepData(tx: Tx, stepId: string): StepData {
  let d = tx.run.data.steps[stepId];
  if (!d) {
    d = { history: [] };
    tx.run.data.steps[stepId] = d;
  }
  return d;
}

/** The current completion fields of a step record (everything but `history`), or null when none. */
function currentOf(d: StepData): Completion | null {
  const { history: _history, ...current } = d;
  return Object.keys(current).length > 0 ? current : null;
}

/**
 * Records a completion (§3.1): the step's earlier current fields, if any, move to `history` first
 * (oldest first), then the new fields become current.
 */
export function record(tx: Tx, stepId: string, completion: Completion): void {
  const d = stepData(tx, stepId);
  const previous = currentOf(d);
  const history = previous ? [...d.history, previous] : d.history;
  tx.run.data.steps[stepId] = { ...completion, history };
  tx.dataChanged = true;
}

/** Moves a step's current fields to `history`, leaving no current value (§3.1 rework). */
function rewindData(tx: Tx, stepId: string): void {
  clearCheckOverlay(tx, stepId);
  const d = tx.run.data.steps[stepId];
  if (!d) return;
  const previous = currentOf(d);
  if (!previous) return;
  tx.run.data.steps[stepId] = { history: [...d.history, previous] };
  tx.dataChanged = true;
}

/**
 * Removes the open work item of a step, if any. A removed item is no longer open, so a decision on it
 * is `already_decided`, not `not_found` ("when it never existed on this run", tools.md decide).
 */
function closeWorkItem(tx: Tx, stepId: string): WorkItemState | null {
  const i = tx.run.workItems.findIndex((w) => w.stepId === stepId);
  if (i < 0) return null;
  const [item] = tx.run.workItems.splice(i, 1);
  if (item && !tx.run.decidedItems.includes(item.id)) tx.run.decidedItems.push(item.id);
  return item ?? null;
}

/**
 * The size in bytes of the run data once `completion` is recorded on `stepId` (its current fields
 * moving to `history` first), as {@link record} would leave it: the measure of the cap (§6 rule 3).
 */
export function dataBytesWith(tx: Tx, stepId: string, completion: Completion): number {
  const d = tx.run.data.steps[stepId];
  const previous = d ? currentOf(d) : null;
  const history = d ? (previous ? [...d.history, previous] : d.history) : [];
  return jsonBytes({ ...tx.run.data, steps: { ...tx.run.data.steps, [stepId]: { ...completion, history } } });
}

/** Marks a work item decided so a second decision is `already_decided` (§3.4). */
export function decideWorkItem(tx: Tx, itemId: string): void {
  const i = tx.run.workItems.findIndex((w) => w.id === itemId);
  if (i >= 0) tx.run.workItems.splice(i, 1);
  if (!tx.run.decidedItems.includes(itemId)) tx.run.decidedItems.push(itemId);
}

function openWorkItem(
  tx: Tx,
  stepId: string,
  kind: WorkItemState["kind"],
  assignedTo: AssignedTo,
  at: number,
) {
  const item: WorkItemState = { id: newId(tx, "w_"), stepId, kind, assignedTo, createdAt: at };
  tx.run.workItems.push(item);
  emit(tx, "work_item.opened", at, stepId, { workItemId: item.id, kind, assignedTo });
  return item;
}

/**
 * Opens the escalation work item of a step in the operator queue (§3.3, tools.md escalate): an agent
 * step's, or a task's that a check was unsure about (check.md §3, marked `escalated`).
 */
export function openEscalation(tx: Tx, stepId: string, at: number): void {
  const to = { group: tx.ctx.config.operatorGroup };
  const item = openWorkItem(tx, stepId, stepOf(tx, stepId).kind === "task" ? "task" : "agent", to, at);
  if (item.kind === "task") item.escalated = true;
}

/**
 * Opens a task's work item for its assignee again (§3.4 `returned`: "for a task, to the assignee's
 * work item") in the same attempt: `due` does not restart. A `person` path that no longer resolves
 * fails the step, as on entry.
 */
export function reopenTask(tx: Tx, stepId: string, at: number): void {
  const step = stepOf(tx, stepId);
  if (step.kind !== "task") throw new Error(`step ${stepId} is not a task`);
  const to = assigneeOrFail(tx, step, at);
  if (to) openWorkItem(tx, stepId, "task", to, at);
}

/** The step's assignee, or `null` after failing the step because its `person` path resolves to nothing (§3.5). */
function assigneeOrFail(tx: Tx, step: TaskStep | ApproveStep, at: number): AssignedTo | null {
  const to = assignee(tx, step);
  if (!to) {
    const note = `${step.person} resolves to no person in run data, so step ${step.id} cannot be assigned`;
    failStep(tx, step.id, note, "server", at);
  }
  return to;
}

/**
 * Shows an unsure verdict as `steps.<id>.check` while it waits on a person (check.md §3: "even if
 * the step completed before"), remembering the `check` the record held so it can be restored.
 */
export function setCheckOverlay(tx: Tx, stepId: string, verdict: CheckVerdict): void {
  const r = rt(tx, stepId);
  const d = stepData(tx, stepId);
  if (!r.checkOverlay) r.checkOverlay = { previous: d.check ?? null };
  d.check = verdict;
  tx.dataChanged = true;
}

/** Takes an unsure verdict's overlay off the step's record again (the person decided). */
export function clearCheckOverlay(tx: Tx, stepId: string): void {
  const r = tx.run.steps[stepId];
  const d = tx.run.data.steps[stepId];
  if (!r?.checkOverlay || !d) return;
  const previous = r.checkOverlay.previous;
  if (previous !== null) d.check = previous;
  else {
    delete d.check;
    // A record the overlay created (the step never completed) goes again, as if never shown.
    if (Object.keys(d).length === 1 && d.history.length === 0) delete tx.run.data.steps[stepId];
  }
  r.checkOverlay = null;
  tx.dataChanged = true;
}

/** A value at a run-data path `inputs.<f>` or `steps.<id>.output.<f>` (§2.2 `person`, `wait_until`). */
export function valueAtPath(tx: Tx, path: string): unknown {
  const parts = path.split(".");
  if (parts[0] === "inputs" && parts.length === 2) return tx.run.data.inputs[parts[1] as string];
  if (parts[0] === "steps" && parts.length === 4 && parts[2] === "output") {
    return tx.run.data.steps[parts[1] as string]?.output?.[parts[3] as string];
  }
  return undefined;
}

/**
 * Who a person step is assigned to (§2.2 `person`, §3.4): a role → its bound group; `initiator` → the
 * person who started the run; a path → the person value in run data. `null` when a path resolves to
 * nothing (the caller fails the step).
 */
function assignee(tx: Tx, step: TaskStep | ApproveStep): AssignedTo | null {
  const person = step.person;
  if (person === "initiator") return tx.run.initiator ? { person: tx.run.initiator } : null;
  if (person.includes(".")) {
    const value = valueAtPath(tx, person);
    return typeof value === "string" && isPersonValue(value) ? { person: value } : null;
  }
  const group = tx.ctx.def.bindings[person];
  if (group === undefined) throw new Error(`role ${person} has no group binding in ${tx.ctx.def.name}`);
  return { group };
}

function startAttempt(tx: Tx, stepId: string, at: number, due: string | null): StepRuntime {
  const r = rt(tx, stepId);
  r.enteredSeq = nextSeq(tx);
  r.lastEnteredSeq = r.enteredSeq;
  r.readySince = at;
  r.dueAt = due ? at + (parseDuration(due) ?? 0) : null;
  r.overdueNotified = false;
  r.claim = null;
  r.progress = null;
  r.handoff = null;
  r.escalation = null;
  r.fireAt = null;
  return r;
}

/**
 * Reaches a step (§3.2, §6 rule 1), running every automatic transition that follows at the same
 * moment: a wait_until already past, a wait_for with a held event, a finish.
 */
export function enter(tx: Tx, stepId: string, at: number): void {
  if (tx.run.state === "ended" || tx.run.state === "cancelled") return;
  const step = stepOf(tx, stepId);
  switch (step.kind) {
    case "agent": {
      const r = startAttempt(tx, stepId, at, step.due);
      r.state = "ready";
      emit(tx, "step.ready", at, stepId);
      return;
    }
    case "task":
    case "approve": {
      const r = startAttempt(tx, stepId, at, step.due);
      const to = assigneeOrFail(tx, step, at);
      if (!to) return;
      r.state = "waiting";
      openWorkItem(tx, stepId, step.kind, to, at);
      return;
    }
    case "wait": {
      const r = startAttempt(tx, stepId, at, null);
      r.state = "waiting";
      r.fireAt = at + (parseDuration(step.duration) ?? 0);
      return;
    }
    case "wait_until": {
      const r = startAttempt(tx, stepId, at, null);
      const value = valueAtPath(tx, step.path);
      const when = typeof value === "string" ? parseDateTime(value) : null;
      if (when === null) {
        failStep(
          tx,
          stepId,
          value === undefined
            ? `${step.path} is missing, so step ${stepId} has no time to wait until`
            : `${step.path} is not an RFC 3339 datetime with an offset, so step ${stepId} cannot wait until it`,
          "server",
          at,
        );
        return;
      }
      if (when <= at) {
        complete(tx, stepId, { by: "server", at: iso(at) }, at);
        return;
      }
      r.state = "waiting";
      r.fireAt = when;
      return;
    }
    case "wait_for": {
      const r = startAttempt(tx, stepId, at, null);
      r.state = "waiting";
      const held = tx.run.heldEvents.findIndex((e) => e.name === step.event);
      if (held >= 0) {
        const [event] = tx.run.heldEvents.splice(held, 1);
        if (event) {
          emit(tx, "event.consumed", at, stepId, { name: event.name });
          complete(tx, stepId, { output: event.data, by: event.by, at: iso(at) }, at);
          return;
        }
      }
      r.fireAt = step.timeout ? at + (parseDuration(step.timeout) ?? 0) : null;
      return;
    }
    case "finish": {
      const r = startAttempt(tx, stepId, at, null);
      r.state = "done";
      endRun(tx, "ended", step.outcome, { by: "server", at: iso(at), note: null }, at);
      return;
    }
    case "parallel": {
      // parallel.md §3 Fork: the step waits and every branch entry is reached in this same write,
      // each as any step is (its own claim or work item, `due` from now, waits, events). The step
      // is `waiting` before the entries are reached, so a branch that joins at once finds it so.
      const r = startAttempt(tx, stepId, at, null);
      r.state = "waiting";
      r.joined = [];
      for (const entry of step.branches) enter(tx, entry, at);
      return;
    }
    default: {
      const unreachable: never = step;
      throw new Error(`unknown step kind ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * Completes a step with its record and moves on: to the chosen route, else the step's `next` (or the
 * following step) (§3.2).
 */
export function complete(tx: Tx, stepId: string, completion: Completion, at: number, chosen?: string): void {
  const r = rt(tx, stepId);
  r.state = "done";
  r.claim = null;
  r.progress = null;
  r.fireAt = null;
  r.escalation = null;
  // An unsure verdict laid over the record while a person decided comes off before the completion
  // is recorded, so `history` receives only completions.
  clearCheckOverlay(tx, stepId);
  record(tx, stepId, completion);
  emit(tx, "step.completed", at, stepId, completion.by ? { by: completion.by } : undefined);
  const target = chosen ?? defaultTarget(tx, stepId);
  if (target === "join" && branchMembership(tx.ctx.def.process).has(stepId)) join(tx, stepId, at);
  else if (target) enter(tx, target, at);
  settle(tx, at);
}

/**
 * A branch reached `join` (parallel.md §3 Join). When it is the last branch of the fork, the
 * parallel step becomes `done` in the same write (recording nothing in run data) and its `next` is
 * reached; until then the branch waits, its outputs already in run data.
 */
function join(tx: Tx, stepId: string, at: number): void {
  const membership = branchMembership(tx.ctx.def.process).get(stepId);
  if (!membership) throw new Error(`step ${stepId} joins but is in no branch`);
  const parallel = stepOf(tx, membership.parallel);
  if (parallel.kind !== "parallel") throw new Error(`${membership.parallel} is not a parallel step`);
  const p = rt(tx, parallel.id);
  if (p.state !== "waiting")
    throw new Error(`branch ${membership.entry} joined ${parallel.id}, which is not waiting`);
  const joined = p.joined ?? [];
  if (!joined.includes(membership.entry)) joined.push(membership.entry);
  p.joined = joined;
  if (!parallel.branches.every((b) => joined.includes(b))) return;
  p.state = "done";
  emit(tx, "step.completed", at, parallel.id);
  const next = defaultTarget(tx, parallel.id);
  if (next) enter(tx, next, at);
}

function defaultTarget(tx: Tx, stepId: string): string | null {
  const next = stepNext(tx.ctx.def.process, stepId);
  return typeof next === "string" ? next : null;
}

/** A `wait_for` timed out: continue at `on_timeout`, default the step's `next` (§2.2). */
export function timeOut(tx: Tx, stepId: string, at: number): void {
  const step = stepOf(tx, stepId);
  if (step.kind !== "wait_for") return;
  complete(
    tx,
    stepId,
    { by: "server", at: iso(at) },
    at,
    step.onTimeout ?? defaultTarget(tx, stepId) ?? undefined,
  );
}

/**
 * Rejection into `on_reject` (§3.1): every step reached after the returned-to step, other than the
 * rejecting approval, moves its current fields to `history` and becomes `null`; the approval keeps
 * `decision: rejected`, `note`, `by`, `at` current and is no longer reached; the target is reached
 * again as a fresh attempt (handoff empty, `due` restarted).
 */
export function rework(tx: Tx, approvalId: string, targetId: string, at: number): void {
  const target = rt(tx, targetId);
  // "After the returned-to step" is downstream of it (forward edges) and reached since it was last
  // reached. A target this run never reached (a route not taken: diagnose → confirm rejecting into
  // tier1_handoff) has nothing after it; a target rewound earlier still has its last entry, so a
  // step completed since (an approval on another route) is rewound too.
  const from = target.enteredSeq ?? target.lastEnteredSeq ?? null;
  const downstream = forwardReachable(tx, targetId);
  const later = Object.entries(tx.run.steps).filter(
    ([id, r]) =>
      from !== null &&
      id !== targetId &&
      id !== approvalId &&
      downstream.has(id) &&
      r.enteredSeq !== null &&
      r.enteredSeq > from,
  );
  for (const [id, r] of later) {
    closeWorkItem(tx, id);
    rewindData(tx, id);
    tx.run.steps[id] = { ...emptyRuntime(), lastEnteredSeq: r.enteredSeq };
  }
  const approval = rt(tx, approvalId);
  approval.state = null;
  approval.fireAt = null;
  enter(tx, targetId, at);
  settle(tx, at);
}

/** Steps reachable from `from` along forward edges: `next` (routes, the default), `on_timeout`, parallel branches. */
function forwardReachable(tx: Tx, from: string): Set<string> {
  const seen = new Set<string>();
  const queue = [from];
  while (queue.length > 0) {
    const id = queue.pop() as string;
    const step = stepById(tx.ctx.def.process, id);
    if (!step) continue;
    const next = stepNext(tx.ctx.def.process, id);
    const targets = typeof next === "string" ? [next] : Array.isArray(next) ? next.map((r) => r.to) : [];
    if (step.kind === "wait_for" && step.onTimeout) targets.push(step.onTimeout);
    if (step.kind === "parallel") targets.push(...step.branches);
    for (const t of targets) {
      if (!seen.has(t)) {
        seen.add(t);
        queue.push(t);
      }
    }
  }
  return seen;
}

/**
 * A step fails and ends the run `failed` (§3.4 `failed`, §3.5): the step is `failed` with
 * `decision: failed`, `note`, `by`, `at` current in run data; `run.ended` carries the note.
 */
export function failStep(tx: Tx, stepId: string, note: string, by: string, at: number): void {
  const r = rt(tx, stepId);
  clearCheckOverlay(tx, stepId);
  closeWorkItem(tx, stepId);
  r.claim = null;
  r.fireAt = null;
  record(tx, stepId, { decision: "failed", note, by, at: iso(at) });
  r.state = "failed";
  endRun(tx, "ended", "failed", { by, at: iso(at), note }, at);
}

/**
 * Ends or cancels the run (§3.5): every unfinished step becomes `cancelled`, every open work item is
 * removed, every claim ends (its token stops working), held events are discarded.
 */
export function endRun(
  tx: Tx,
  state: "ended" | "cancelled",
  outcome: string | null,
  ended: Ended,
  at: number,
): void {
  for (const r of Object.values(tx.run.steps)) {
    if (r.state === "ready" || r.state === "claimed" || r.state === "waiting") r.state = "cancelled";
    r.claim = null;
    r.fireAt = null;
    r.progress = null;
  }
  tx.run.workItems = [];
  tx.run.heldEvents = [];
  tx.run.state = state;
  tx.run.outcome = outcome;
  tx.run.ended = ended;
  emit(tx, "run.ended", at, undefined, { state, outcome, by: ended.by });
}

/** Recomputes the run state (§3.5): `active` while any step is ready or claimed, else `waiting`. */
export function settle(tx: Tx, _at: number): void {
  if (tx.run.state === "ended" || tx.run.state === "cancelled") return;
  const busy = Object.values(tx.run.steps).some((r) => r.state === "ready" || r.state === "claimed");
  tx.run.state = busy ? "active" : "waiting";
}

/**
 * Finishes a command's application: the snapshot when run data changed, and `updatedAt` = `at`
 * unless `at` is null (a refusal, or only timers fired: each set `updatedAt` to its own time).
 */
export function finish(tx: Tx, at: number | null): void {
  if (tx.dataChanged) tx.run.snapshot = snapshotOf(tx.run.data);
  if (at !== null) tx.run.updatedAt = at;
}
