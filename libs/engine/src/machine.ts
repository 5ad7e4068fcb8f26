import { type AgentStep, checkOf, checkValues, iso, type TaskStep } from "@baton/process";
import {
  type CheckAnswers,
  type CheckRequest,
  type CheckVerdict,
  CONFLICT,
  type Completion,
  capIssues,
  decideCombinationIssues,
  type EvidenceItemArg,
  type FileCheck,
  type Identity,
  type ProtocolError,
  protocolError,
  runEnded,
} from "@baton/protocol";
import { accept } from "./acceptance.ts";
import { checkLines, checkRequest, DEFAULT_CHECK_LIMITS, verdictOf } from "./check.ts";
import type {
  Actor,
  Command,
  CommandContext,
  CommandValue,
  DomainEvent,
  Outcome,
  StartCommand,
} from "./commands.ts";
import type { Run, WorkItemState } from "./run.ts";
import { jsonBytes, snapshotOf } from "./snapshot.ts";
import { applyDueTimers } from "./timers.ts";
import {
  clearCheckOverlay,
  complete,
  dataBytesWith,
  decideWorkItem,
  emptyRuntime,
  endRun,
  enter,
  failStep,
  finish,
  newId,
  openEscalation,
  record,
  reopenTask,
  rework,
  rt,
  setCheckOverlay,
  settle,
  stepOf,
  type Tx,
} from "./transitions.ts";

/**
 * The run engine's functional core (ARCHITECTURE rule 1): `(run, command, context) → outcome`.
 * No I/O, no clock, no randomness: time, identity, the pinned process and resolved file evidence all
 * come in through the context. Every rule of §3 and the tool contracts for one run lives here.
 */

/** A person identity, or null. */
function person(actor: Actor): Identity | null {
  return actor.kind === "person" ? actor : null;
}

function isEnded(run: Run): boolean {
  return run.state === "ended" || run.state === "cancelled";
}

/**
 * `start_run` (tools.md start_run, §3.2, §3.4): checks inputs against `inputs` (every issue at once)
 * and the run-data cap, refuses an agent starting a process with an `initiator` step, then reaches the
 * first step and every automatic transition after it.
 *
 * Errors: `invalid` with issues. The actor must be an agent or a person (the shell checks `server`
 * never starts runs).
 */
export function startRun(cmd: StartCommand, ctx: CommandContext): Outcome | { error: ProtocolError } {
  const { def, actor, now, config } = ctx;
  if (actor.kind === "server") throw new Error("the server does not start runs");
  // Every issue at once (§6 rule 3): inputs, the initiator rule and the cap are independent checks.
  const issues = checkValues(def.process.inputs, cmd.inputs, "inputs");
  const reasons: string[] = [];
  if (issues.length > 0) reasons.push(`inputs do not match ${def.name} v${def.version}`);
  if (actor.kind === "agent") {
    const initiatorSteps = def.process.steps.filter(
      (s) => (s.kind === "task" || s.kind === "approve") && s.person === "initiator",
    );
    if (initiatorSteps.length > 0) {
      reasons.push(
        `${def.name} assigns ${initiatorSteps.map((s) => s.id).join(", ")} to initiator; a run started by an agent has no initiator, so a person must start it`,
      );
      issues.push(
        ...initiatorSteps.map((s) => `steps.${s.id}.person: initiator needs a person to start the run`),
      );
    }
  }
  const size = jsonBytes({ inputs: cmd.inputs, steps: {} });
  if (size > config.runDataBytes) {
    reasons.push("the inputs are larger than this server accepts");
    issues.push(`inputs: run data would be ${size} bytes, over limits.runDataBytes (${config.runDataBytes})`);
  }
  if (issues.length > 0) return { error: protocolError("invalid", `${reasons.join("; ")}.`, issues) };
  const data = { inputs: cmd.inputs, steps: {} };
  const run: Run = {
    id: cmd.runId,
    org: def.org,
    process: def.name,
    version: def.version,
    contentHash: def.contentHash,
    mode: cmd.mode,
    state: "active",
    outcome: null,
    ended: null,
    startedBy: actor.id,
    startedByKind: actor.kind,
    initiator: actor.kind === "person" ? actor.id : null,
    startedAt: now,
    updatedAt: now,
    rev: 0,
    data,
    steps: Object.fromEntries(def.process.steps.map((s) => [s.id, emptyRuntime()])),
    workItems: [],
    decidedItems: [],
    heldEvents: [],
    seq: 0,
    snapshot: snapshotOf(data),
  };
  const tx: Tx = { run, ctx, events: [], dataChanged: false, fired: [] };
  tx.events.push({ type: "run.started", runId: run.id, org: run.org, mode: run.mode, at: now });
  const first = def.process.steps[0];
  if (!first) throw new Error(`${def.name} v${def.version} has no steps`);
  enter(tx, first.id, now);
  settle(tx, now);
  // §4: the write returns only after every automatic transition it triggered, including a timer
  // that is due the moment it exists (`wait: 0m`, `due: 0m`).
  applyDueTimers(tx, now);
  finish(tx, now);
  return {
    run: tx.run,
    changed: true,
    value: { kind: "view" },
    error: null,
    events: tx.events,
    fired: tx.fired ?? [],
  };
}

/**
 * Applies one command to a run (§3, tools.md). Timers due at `now` are applied first, each at its own
 * time (lease expiry, waits, time-outs, `due`). The input run is never mutated. Errors follow each
 * tool's documented order, with `run_ended` first on every write (§3.5).
 */
export function apply(run: Run, command: Command, ctx: CommandContext): Outcome {
  const tx: Tx = { run: structuredClone(run), ctx, events: [], dataChanged: false, fired: [] };
  const timed = applyDueTimers(tx, ctx.now) > 0;
  const result = dispatch(tx, command);
  if (result.needsCheck) {
    // Nothing is applied until the evaluator's answers come with the command (check.md §3).
    return {
      run,
      changed: false,
      value: null,
      error: null,
      events: [],
      fired: [],
      needsCheck: result.needsCheck,
    };
  }
  // §4: the write returns only after every automatic transition it triggered, including a timer it
  // created already due (`wait: 0m`, `due: 0m`). A refusal creates no timer.
  if (!result.error) applyDueTimers(tx, ctx.now);
  const changed = timed || result.changed;
  // `updatedAt` moves with what a reader can see changed: a timer at its own time (set as it fires),
  // an accepted command at `now`. A refusal changes nothing a reader sees ("nothing changed"), even
  // when it records `handoff.issues` for the next attempt.
  if (changed) finish(tx, result.changed && !result.error ? ctx.now : null);
  return {
    run: tx.run,
    changed,
    value: result.error ? null : result.value,
    error: result.error,
    events: tx.events,
    fired: tx.fired ?? [],
  };
}

interface Step {
  value: CommandValue;
  error: ProtocolError | null;
  changed: boolean;
  /** The command waits for the evaluator's answers to this request (see {@link Outcome.needsCheck}). */
  needsCheck?: CheckRequest;
}

const refuse = (error: ProtocolError, changed = false): Step => ({ value: { kind: "none" }, error, changed });
const done = (value: CommandValue): Step => ({ value, error: null, changed: true });

function dispatch(tx: Tx, command: Command): Step {
  switch (command.type) {
    case "tick":
      return { value: { kind: "none" }, error: null, changed: false };
    case "claim":
      return claim(tx, command.stepId);
    case "renew":
      return renew(tx, command.claimId, command.progress);
    case "submit":
      return submit(tx, command);
    case "escalate":
      return escalate(tx, command.claimId, command.note);
    case "decide":
      return decide(tx, command);
    case "cancel":
      return cancel(tx, command.reason);
    case "send_event":
      return sendEvent(tx, command.name, command.data);
    default: {
      const unreachable: never = command;
      throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
    }
  }
}

/** tools.md claim: run_ended → forbidden (non-agent) → not_found → forbidden (non-agent step) → conflict. */
function claim(tx: Tx, stepId: string): Step {
  const { run, ctx } = tx;
  if (isEnded(run)) return refuse(runEnded(run.id));
  if (ctx.actor.kind !== "agent") {
    return refuse(
      protocolError("forbidden", "only an agent identity claims steps; people use get_work and decide"),
    );
  }
  const step = ctx.def.process.steps.find((s) => s.id === stepId);
  if (!step) return refuse(protocolError("not_found", `run ${run.id} has no step ${stepId}`));
  if (step.kind !== "agent") {
    return refuse(
      protocolError("forbidden", `step ${stepId} is a ${step.kind} step; only agent steps are claimed`),
    );
  }
  const r = rt(tx, stepId);
  if (r.state === "claimed" && r.claim) {
    return r.claim.by === ctx.actor.id
      ? refuse(protocolError("conflict", `you already hold the claim on ${stepId}`, [CONFLICT.claimedByYou]))
      : refuse(
          protocolError("conflict", `another agent holds the claim on ${stepId}`, [CONFLICT.claimedByOther]),
        );
  }
  if (r.state !== "ready") {
    return refuse(
      protocolError("conflict", `step ${stepId} is not ready (it is ${r.state ?? "not reached"})`, [
        CONFLICT.notReady,
      ]),
    );
  }
  const expiresAt = ctx.now + ctx.config.leaseMs;
  const claimId = newId(tx, "c");
  r.claim = { id: claimId, by: ctx.actor.id, expiresAt };
  r.state = "claimed";
  r.progress = null;
  settle(tx, ctx.now);
  return done({ kind: "claim", claimId, expiresAt, stepId });
}

/** The live claim a token names, or the refusal: `stale` once its lease ended or it was replaced (§6 rule 2). */
function liveClaim(tx: Tx, claimId: string): { stepId: string } | ProtocolError {
  const { run, ctx } = tx;
  for (const [stepId, r] of Object.entries(run.steps)) {
    if (r.claim?.id === claimId) {
      if (ctx.actor.kind !== "agent" || r.claim.by !== ctx.actor.id) {
        return protocolError("forbidden", "this claim belongs to another identity");
      }
      return { stepId };
    }
  }
  return protocolError(
    "stale",
    "this token's lease has ended or its claim was replaced; call get_work and claim again",
  );
}

/** tools.md renew: new token and expiry (now + lease); the old token stops working at once. */
function renew(tx: Tx, claimId: string, progress: string | undefined): Step {
  if (isEnded(tx.run)) return refuse(runEnded(tx.run.id));
  const live = liveClaim(tx, claimId);
  if ("code" in live) return refuse(live);
  const r = rt(tx, live.stepId);
  const expiresAt = tx.ctx.now + tx.ctx.config.leaseMs;
  const id = newId(tx, "c");
  r.claim = { id, by: tx.ctx.actor.kind === "server" ? "server" : tx.ctx.actor.id, expiresAt };
  if (progress !== undefined) r.progress = progress;
  return done({ kind: "renew", claimId: id, expiresAt });
}

/** tools.md submit: run_ended → stale → not_accepted (every issue) → the step completes. */
function submit(tx: Tx, cmd: Extract<Command, { type: "submit" }>): Step {
  if (isEnded(tx.run)) return refuse(runEnded(tx.run.id));
  const live = liveClaim(tx, cmd.claimId);
  if ("code" in live) return refuse(live);
  const step = stepOf(tx, live.stepId) as AgentStep;
  const by = (tx.ctx.actor as Identity).id;
  return completeWork(tx, step, cmd, {
    summaryRequired: true,
    by,
    check: {
      answers: cmd.check,
      onUnsure: (verdict, candidate) => holdForPerson(tx, step, by, verdict, candidate),
    },
    beforeComplete: () => {
      rt(tx, step.id).claim = null;
    },
  });
}

/**
 * check.md §3 unsure: the submission is held as the step's candidate and the step is escalated
 * exactly as `escalate` does, with the verdict in `escalation.check` and the candidate in
 * `escalation.candidate`, and the verdict shown as `steps.<id>.check` while a person decides. An
 * agent step loses its claim; a task's work item is decided and the escalation item replaces it.
 */
function holdForPerson(
  tx: Tx,
  step: AgentStep | TaskStep,
  by: string,
  verdict: CheckVerdict,
  candidate: Completion,
  taskItem?: WorkItemState,
): void {
  const at = tx.ctx.now;
  const r = rt(tx, step.id);
  const check = checkOf(step);
  const unsure = check ? checkLines(check, verdict, NOT_PASSED, limitsOf(tx)) : [];
  r.claim = null;
  r.progress = null;
  r.state = "waiting";
  r.escalation = {
    note: `The check was unsure about this submission; complete it with the candidate or your own output, return it, or fail it. ${unsure.join("; ")}`,
    by,
    at: iso(at),
    check: verdict,
    candidate,
  };
  if (taskItem) decideWorkItem(tx, taskItem.id);
  setCheckOverlay(tx, step.id, verdict);
  openEscalation(tx, step.id, at);
  settle(tx, at);
}

/** The results an unsure verdict reports to the person, and to the next attempt when returned. */
const NOT_PASSED = ["unsure", "fail"] as const;

/** The check profile's limits of this server (check.md §5). */
function limitsOf(tx: Tx) {
  return tx.ctx.config.check ?? DEFAULT_CHECK_LIMITS;
}

/** How {@link completeWork} runs for one caller. */
interface WorkOptions {
  /** §3.3: `summary` is required from agents and optional from people. */
  summaryRequired: boolean;
  /** Who completes the step (`by` in run data). */
  by: string;
  /**
   * The step's check runs (check.md §3), with the evaluator's answers if the command carries them;
   * absent when a person completes an escalated step, which is not checked again.
   */
  check?: {
    answers: CheckAnswers | undefined;
    onUnsure: (verdict: CheckVerdict, candidate: Completion) => void;
  };
  /** An unsure verdict the completion records as `check` (a person completing a held candidate). */
  carry?: CheckVerdict;
  /** File evidence already verified for this completion (the held candidate's, check.md §3). */
  verified?: ReadonlyMap<string, FileCheck>;
  beforeComplete: () => void;
}

/**
 * Shared acceptance and completion for `submit` and a person's `completed` (§3.4: "same acceptance").
 * A refusal records the issues in `handoff.issues` for the next attempt (§3.3) and changes nothing
 * else. Once every objective rule passes, the step's check runs (check.md §3): without answers for
 * this submission the command waits for the evaluator (`needsCheck`); with them, `pass` (and every
 * advisory verdict) completes the step recording the verdict, `fail` refuses as `not_accepted` with
 * one issue per failed question and the verdict in `handoff.check`, `unsure` holds the submission for
 * a person, and `error` refuses as `retry` with nothing changed.
 */
function completeWork(
  tx: Tx,
  step: AgentStep | TaskStep,
  sub: {
    output?: Record<string, unknown> | undefined;
    evidence?: EvidenceItemArg[] | undefined;
    summary?: string | undefined;
    next?: string | undefined;
    reason?: string | undefined;
  },
  options: WorkOptions,
): Step {
  const { ctx } = tx;
  const { by } = options;
  const files = options.verified
    ? new Map([...options.verified, ...(ctx.files ?? new Map<string, FileCheck>())])
    : (ctx.files ?? new Map<string, FileCheck>());
  const verdict = accept(
    ctx.def,
    step,
    { output: sub.output, evidence: sub.evidence, summary: sub.summary, next: sub.next, reason: sub.reason },
    files,
    options.summaryRequired,
  );
  const notAccepted = (all: string[], check?: CheckVerdict) => {
    // §3.3: the next attempt reads the issues of the last refused submission in `handoff.issues`,
    // and the verdict of a check that sent it back in `handoff.check` (check.md §3).
    const issues = capIssues(all);
    const r = rt(tx, step.id);
    const same = JSON.stringify(r.handoff?.issues ?? null) === JSON.stringify(issues) && check === undefined;
    if (!same) r.handoff = { ...(r.handoff ?? {}), issues, ...(check ? { check } : {}) };
    return refuse(
      protocolError(
        "not_accepted",
        `the submission for ${step.id} was not accepted; nothing changed`,
        issues,
      ),
      !same,
    );
  };
  const at = ctx.now;
  // The cap is one of the acceptance rules (§6 rule 3: "every issue at once"), so it is measured even
  // when other issues refuse the submission, on the submission as sent.
  const measured: Completion = verdict.ok
    ? verdict.accepted.completion
    : {
        output: sub.output ?? {},
        evidence: (sub.evidence ?? []).map((e) => ({ kind: e.kind, ref: e.ref })),
        ...(sub.summary !== undefined ? { summary: sub.summary } : {}),
        ...(sub.next !== undefined ? { next: sub.next } : {}),
        ...(sub.reason !== undefined ? { reason: sub.reason } : {}),
      };
  const capIssue = (size: number) =>
    `run data: ${size} bytes with this submission, over limits.runDataBytes (${ctx.config.runDataBytes})`;
  const size = dataBytesWith(tx, step.id, { ...measured, by, at: iso(at) });
  const issues = verdict.ok ? [] : [...verdict.issues];
  if (size > ctx.config.runDataBytes) issues.push(capIssue(size));
  if (!verdict.ok || issues.length > 0) return notAccepted(issues);
  const accepted = verdict.accepted.completion;
  let recorded = options.carry;
  const check = options.check ? checkOf(step) : null;
  if (check && options.check) {
    const limits = limitsOf(tx);
    const request = checkRequest(
      tx.run.id,
      step,
      check,
      ctx.def.process.body,
      tx.run.data,
      { output: accepted.output ?? {}, summary: accepted.summary, evidence: sub.evidence },
      limits,
    );
    const answers = options.check.answers;
    if (answers?.key !== request.key)
      return { value: { kind: "none" }, error: null, changed: false, needsCheck: request };
    const result = verdictOf(check, answers, limits, request.material.truncated, iso(at));
    if (!check.advisory && result.verdict === "error") {
      return refuse(
        protocolError(
          "retry",
          `the check on ${step.id} got no answer from the evaluator; nothing changed, retry with the same requestId`,
        ),
      );
    }
    tx.events.push({
      type: "step.checked",
      runId: tx.run.id,
      org: tx.run.org,
      mode: tx.run.mode,
      at,
      stepId: step.id,
      detail: { verdict: result.verdict, advisory: result.advisory, model: result.model, by },
    });
    if (!check.advisory && result.verdict === "fail") {
      return notAccepted(checkLines(check, result, ["fail"], limits), result);
    }
    if (!check.advisory && result.verdict === "unsure") {
      const current = tx.run.data.steps[step.id] ?? { history: [] };
      const shown = jsonBytes({
        ...tx.run.data,
        steps: { ...tx.run.data.steps, [step.id]: { ...current, check: result } },
      });
      if (shown > ctx.config.runDataBytes) return notAccepted([capIssue(shown)]);
      options.check.onUnsure(result, accepted);
      return done({ kind: "view" });
    }
    recorded = result;
  }
  const completion: Completion = { ...accepted, ...(recorded ? { check: recorded } : {}), by, at: iso(at) };
  if (recorded) {
    // The verdict is run data too (check.md §3), so the cap holds with it recorded.
    const withVerdict = dataBytesWith(tx, step.id, completion);
    if (withVerdict > ctx.config.runDataBytes) return notAccepted([capIssue(withVerdict)]);
  }
  options.beforeComplete();
  complete(tx, step.id, completion, at, verdict.accepted.chosen);
  return done({ kind: "view" });
}

/** tools.md escalate: the step waits on a person with the note; the token is invalid at once. */
function escalate(tx: Tx, claimId: string, note: string): Step {
  if (isEnded(tx.run)) return refuse(runEnded(tx.run.id));
  const live = liveClaim(tx, claimId);
  if ("code" in live) return refuse(live);
  if (note.trim() === "") {
    return refuse(
      protocolError("invalid", "say what you tried and what a person must decide", ["note: required"]),
    );
  }
  const at = tx.ctx.now;
  const r = rt(tx, live.stepId);
  r.claim = null;
  r.progress = null;
  r.state = "waiting";
  r.escalation = { note, by: (tx.ctx.actor as Identity).id, at: iso(at) };
  openEscalation(tx, live.stepId, at);
  settle(tx, at);
  return done({ kind: "view" });
}

function decisionsFor(item: WorkItemState): readonly string[] {
  // A task a check escalated is decided as an escalated agent step is (check.md §3).
  if (item.escalated) return ["returned", "completed", "failed"];
  switch (item.kind) {
    case "task":
      return ["completed", "failed"];
    case "approve":
      return ["approved", "rejected", "failed"];
    case "agent":
      return ["returned", "completed", "failed"];
    default: {
      const unreachable: never = item.kind;
      throw new Error(`unknown work item kind ${String(unreachable)}`);
    }
  }
}

/** Whether a person is within a work item's assignment (§3.4). */
export function mayDecide(actor: Identity, item: WorkItemState, operatorGroup: string): boolean {
  if (actor.kind !== "person") return false;
  const to = item.assignedTo;
  if ("person" in to) return to.person.toLowerCase() === actor.id.toLowerCase();
  if (to.group === operatorGroup && actor.operator) return true;
  return actor.groups.includes(to.group);
}

/** The decisions a work item accepts (tools.md run view `decide.decisions`). */
export function decisionsOf(item: WorkItemState): string[] {
  return [...decisionsFor(item)];
}

/**
 * tools.md decide, in the order checked: run_ended → already_decided → not_found → stale → forbidden
 * (non-human identity or outside the assignment) → invalid (a decision this item does not accept,
 * and the decision table's combinations: `note` with `completed`, `next` with `approved`, a missing
 * note, …; `decideCombinationIssues`) → not_accepted (the cap, and acceptance for `completed`).
 */
function decide(tx: Tx, cmd: Extract<Command, { type: "decide" }>): Step {
  const { run, ctx } = tx;
  if (isEnded(run)) return refuse(runEnded(run.id));
  if (run.decidedItems.includes(cmd.workItemId)) {
    return refuse(
      protocolError("conflict", `work item ${cmd.workItemId} was already decided`, [CONFLICT.alreadyDecided]),
    );
  }
  const item = run.workItems.find((w) => w.id === cmd.workItemId);
  if (!item) return refuse(protocolError("not_found", `run ${run.id} has no work item ${cmd.workItemId}`));
  if (cmd.snapshot !== run.snapshot) {
    return refuse(
      protocolError(
        "stale",
        "run data changed since your read; call get_run for a fresh snapshot and decide again",
      ),
    );
  }
  const who = person(ctx.actor);
  if (!who) return refuse(protocolError("forbidden", "only a person decides work items (§6 rule 4)"));
  if (!mayDecide(who, item, ctx.config.operatorGroup)) {
    return refuse(protocolError("forbidden", `work item ${item.id} is not assigned to you`));
  }
  // The decision and its arguments (tools.md decide's table), every issue at once, after forbidden
  // and before not_accepted in the tool's order of checks.
  const allowed = decisionsFor(item);
  const argIssues = allowed.includes(cmd.decision) ? [] : [`decision: must be one of ${allowed.join(", ")}`];
  argIssues.push(...decideCombinationIssues(cmd));
  if (argIssues.length > 0) {
    return refuse(
      protocolError(
        "invalid",
        allowed.includes(cmd.decision)
          ? `the arguments do not fit decision "${cmd.decision}"`
          : `decision "${cmd.decision}" is not allowed on this work item`,
        argIssues,
      ),
    );
  }
  const at = ctx.now;
  const step = stepOf(tx, item.stepId);
  if (cmd.decision === "approved" || cmd.decision === "rejected" || cmd.decision === "failed") {
    // A decision's note is run data too (§3.1), so it must keep run data within the cap (§6 rule 3);
    // otherwise one long note could leave a run that no later submission fits.
    const decided: Completion = {
      decision: cmd.decision,
      ...(cmd.note !== undefined ? { note: cmd.note } : {}),
      by: who.id,
      at: iso(at),
    };
    const size = dataBytesWith(tx, item.stepId, decided);
    if (size > ctx.config.runDataBytes) {
      return refuse(
        protocolError("not_accepted", `the decision on ${item.stepId} was not accepted; nothing changed`, [
          `note: run data would be ${size} bytes with this decision, over limits.runDataBytes (${ctx.config.runDataBytes}); shorten the note`,
        ]),
      );
    }
  }
  switch (cmd.decision) {
    case "failed": {
      decideWorkItem(tx, item.id);
      failStep(tx, item.stepId, cmd.note as string, who.id, at);
      return done({ kind: "view" });
    }
    case "approved": {
      decideWorkItem(tx, item.id);
      const completion =
        cmd.note === undefined
          ? { decision: "approved" as const, by: who.id, at: iso(at) }
          : { decision: "approved" as const, note: cmd.note, by: who.id, at: iso(at) };
      complete(tx, item.stepId, completion, at);
      return done({ kind: "view" });
    }
    case "rejected": {
      if (step.kind !== "approve") throw new Error("rejected on a non-approval");
      decideWorkItem(tx, item.id);
      const note = cmd.note as string;
      const r = rt(tx, step.id);
      if (step.onReject) {
        // The approval's own record is current (decision rejected); its state is no longer reached.
        r.state = "done";
        r.fireAt = null;
        record(tx, step.id, { decision: "rejected", note, by: who.id, at: iso(at) });
        rework(tx, step.id, step.onReject, at);
      } else {
        r.state = "done";
        record(tx, step.id, { decision: "rejected", note, by: who.id, at: iso(at) });
        endRun(tx, "ended", "rejected", { by: who.id, at: iso(at), note }, at);
      }
      return done({ kind: "view" });
    }
    case "returned": {
      decideWorkItem(tx, item.id);
      const r = rt(tx, item.stepId);
      // §3.4: ready again, the note travels in handoff.returned; the due clock does not restart. The
      // same attempt continues, so an unsure verdict that escalated it travels in handoff.check with
      // the lines of the questions that did not pass in handoff.issues (check.md §3), and no longer
      // shows in run data: nobody waits on it now.
      const held = r.escalation?.check;
      const check = held && (step.kind === "agent" || step.kind === "task") ? checkOf(step) : null;
      r.escalation = null;
      clearCheckOverlay(tx, item.stepId);
      r.handoff = {
        ...(r.handoff ?? {}),
        returned: { note: cmd.note as string, by: who.id, at: iso(at) },
        ...(held && check ? { check: held, issues: checkLines(check, held, NOT_PASSED, limitsOf(tx)) } : {}),
      };
      if (step.kind === "task") reopenTask(tx, step.id, at);
      else r.state = "ready";
      settle(tx, at);
      return done({ kind: "view" });
    }
    case "completed": {
      if (step.kind !== "agent" && step.kind !== "task") throw new Error("completed on a non-work step");
      const r = rt(tx, step.id);
      if (item.kind === "agent" || item.escalated) {
        // A person completing an escalated step is not checked again (check.md §3). Without
        // `output` they complete it with the held candidate (tools.md workItems[].escalation),
        // taking whatever else they send instead of the candidate's; its file evidence was verified
        // when it was submitted.
        const candidate = r.escalation?.candidate;
        const held = r.escalation?.check;
        const useCandidate = candidate !== undefined && cmd.output === undefined;
        const sub = useCandidate
          ? {
              output: candidate.output ?? {},
              evidence: cmd.evidence ?? candidate.evidence?.map((e) => ({ kind: e.kind, ref: e.ref })),
              summary: cmd.summary ?? candidate.summary,
              next: cmd.next ?? candidate.next,
              reason: cmd.reason ?? candidate.reason,
            }
          : cmd;
        const verified = new Map<string, FileCheck>();
        if (useCandidate) {
          for (const e of candidate.evidence ?? []) {
            if (e.kind === "file" && e.sha256 !== undefined)
              verified.set(e.ref, { status: "ok", sha256: e.sha256 });
          }
        }
        return completeWork(tx, step, sub, {
          summaryRequired: false,
          by: who.id,
          ...(held ? { carry: held } : {}),
          verified,
          beforeComplete: () => {
            decideWorkItem(tx, item.id);
            r.escalation = null;
          },
        });
      }
      // A person completing an ordinary task is checked (check.md §3).
      return completeWork(tx, step, cmd, {
        summaryRequired: false,
        by: who.id,
        check: {
          answers: cmd.check,
          onUnsure: (verdict, candidate) => holdForPerson(tx, step, who.id, verdict, candidate, item),
        },
        beforeComplete: () => {
          decideWorkItem(tx, item.id);
          r.escalation = null;
        },
      });
    }
    default: {
      const unreachable: never = cmd.decision;
      throw new Error(`unknown decision ${String(unreachable)}`);
    }
  }
}

/** tools.md cancel: run_ended → forbidden (operators only, §4.1) → cancelled with `run.ended`. */
function cancel(tx: Tx, reason: string): Step {
  if (isEnded(tx.run)) return refuse(runEnded(tx.run.id));
  const actor = tx.ctx.actor;
  if (actor.kind !== "person" || !actor.operator) {
    return refuse(protocolError("forbidden", "only an operator cancels runs"));
  }
  if (reason.trim() === "") {
    return refuse(protocolError("invalid", "say why the run is cancelled", ["reason: required"]));
  }
  const at = tx.ctx.now;
  endRun(tx, "cancelled", null, { by: actor.id, at: iso(at), note: reason }, at);
  return done({ kind: "view" });
}

const EVENT_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

/**
 * tools.md send_event / §3.6: run_ended → forbidden (agents and operators only) → the name pattern →
 * the cap → the event satisfies the earliest-reached waiting `wait_for` of that name, else it is held
 * (oldest first). The cap (§6 rule 3, implementing.md Step 2) bounds what the run keeps: a consumed
 * event's data becomes run data, so the run data after recording it must fit; a held event waits in
 * the run, so the run data plus every held event's data must fit. Over the cap → `invalid`, as for
 * inputs at start: the event is refused whole and nothing changes.
 */
function sendEvent(tx: Tx, name: string, data: Record<string, unknown> | undefined): Step {
  const { run, ctx } = tx;
  if (isEnded(run)) return refuse(runEnded(run.id));
  const actor = ctx.actor;
  if (actor.kind === "server" || (actor.kind === "person" && !actor.operator)) {
    return refuse(protocolError("forbidden", "events are sent by agents and operators"));
  }
  if (!EVENT_NAME.test(name)) {
    return refuse(
      protocolError("invalid", "event names match the step id pattern", [
        `name: "${name}" does not match ^[a-z][a-z0-9_-]{0,63}$`,
      ]),
    );
  }
  const payload = data ?? {};
  const at = ctx.now;
  const cap = ctx.config.runDataBytes;
  const tooLarge = (size: number, what: string) =>
    refuse(
      protocolError("invalid", "the event data is larger than this run can keep", [
        `data: ${what} would be ${size} bytes, over limits.runDataBytes (${cap})`,
      ]),
    );
  const waiting = ctx.def.process.steps
    .filter((s) => s.kind === "wait_for" && s.event === name && run.steps[s.id]?.state === "waiting")
    .sort((a, b) => (run.steps[a.id]?.enteredSeq ?? 0) - (run.steps[b.id]?.enteredSeq ?? 0))[0];
  if (waiting) {
    const completion = { output: payload, by: actor.id, at: iso(at) };
    const size = dataBytesWith(tx, waiting.id, completion);
    if (size > cap) return tooLarge(size, "the run data with this event");
    const event: DomainEvent = {
      type: "event.consumed",
      runId: run.id,
      org: run.org,
      mode: run.mode,
      at,
      stepId: waiting.id,
      detail: { name },
    };
    tx.events.push(event);
    complete(tx, waiting.id, completion, at);
    return done({ kind: "send_event", consumedBy: waiting.id });
  }
  const held =
    jsonBytes(run.data) + [...run.heldEvents, { data: payload }].reduce((n, e) => n + jsonBytes(e.data), 0);
  if (held > cap) return tooLarge(held, "the run data and held events with this event");
  run.heldEvents.push({ name, data: payload, by: actor.id, at });
  tx.events.push({ type: "event.held", runId: run.id, org: run.org, mode: run.mode, at, detail: { name } });
  return done({ kind: "send_event", consumedBy: null });
}
