import { iso } from "@baton/process";
import type { Run } from "./run.ts";
import { complete, settle, type Tx, timeOut } from "./transitions.ts";

/** What a timer does when it fires. */
export type TimerKind = "lease" | "wait" | "wait_until" | "timeout" | "due";

/** A point in time at which the run must change by itself (§2.2 waits and `due`, §3.3 leases). */
export interface Timer {
  kind: TimerKind;
  stepId: string;
  /** Epoch ms. */
  at: number;
}

/**
 * Every pending timer of a run, derived from its state, earliest first. The shell keeps the durable
 * timer rows equal to this set in the same commit as the transition (issue #5), so there is nothing
 * else to keep in step.
 */
export function pendingTimers(run: Run, stepKind: (stepId: string) => string | undefined): Timer[] {
  if (run.state === "ended" || run.state === "cancelled") return [];
  const timers: Timer[] = [];
  for (const [stepId, r] of Object.entries(run.steps)) {
    if (r.claim) timers.push({ kind: "lease", stepId, at: r.claim.expiresAt });
    if (r.state === "waiting" && r.fireAt !== null) {
      const kind = stepKind(stepId);
      timers.push({
        kind: kind === "wait_for" ? "timeout" : kind === "wait_until" ? "wait_until" : "wait",
        stepId,
        at: r.fireAt,
      });
    }
    const open = r.state === "ready" || r.state === "claimed" || r.state === "waiting";
    if (open && r.dueAt !== null && !r.overdueNotified) timers.push({ kind: "due", stepId, at: r.dueAt });
  }
  return timers.sort(
    (a, b) => a.at - b.at || a.stepId.localeCompare(b.stepId) || a.kind.localeCompare(b.kind),
  );
}

/**
 * Applies every timer due at or before `now`, earliest first, each at its own fire time, so the result
 * does not depend on when the shell gets round to it: a lease that ended at 10:00 reads as ended at
 * 10:00 whether a claim at 10:05 or the scheduler at 10:00 applies it. Returns how many fired.
 */
export function applyDueTimers(tx: Tx, now: number): number {
  for (let fired = 0; fired < 10_000; fired++) {
    const [timer] = pendingTimers(tx.run, (id) => tx.ctx.def.process.steps.find((s) => s.id === id)?.kind);
    if (!timer || timer.at > now) return fired;
    fire(tx, timer);
  }
  throw new Error(`run ${tx.run.id}: timers did not settle`);
}

function fire(tx: Tx, timer: Timer): void {
  const r = tx.run.steps[timer.stepId];
  if (!r) return;
  tx.fired?.push({ kind: timer.kind, stepId: timer.stepId, at: timer.at });
  // The run changed at the timer's time, not at whenever the shell applied it (a read at 10:05 of a
  // lease that ended at 10:00 shows the same run as the scheduler's commit at 10:00).
  tx.run.updatedAt = Math.max(tx.run.updatedAt, timer.at);
  switch (timer.kind) {
    case "lease": {
      // §3.3: when a lease ends the step is claimable immediately; the last progress note goes to the
      // next claimant in handoff.progress.
      r.claim = null;
      if (r.state === "claimed") r.state = "ready";
      if (r.progress !== null) r.handoff = { ...(r.handoff ?? {}), progress: r.progress };
      r.progress = null;
      settle(tx, timer.at);
      return;
    }
    case "wait":
    case "wait_until":
      r.fireAt = null;
      complete(tx, timer.stepId, { by: "server", at: iso(timer.at) }, timer.at);
      return;
    case "timeout":
      r.fireAt = null;
      timeOut(tx, timer.stepId, timer.at);
      return;
    case "due":
      // §2.2 `due`: the step is marked overdue and the assignee and operators are notified; the work
      // stays open. The mark itself is `now >= dueAt`; this records that the notice went out.
      r.overdueNotified = true;
      tx.events.push({
        type: "step.overdue",
        runId: tx.run.id,
        org: tx.run.org,
        mode: tx.run.mode,
        at: timer.at,
        stepId: timer.stepId,
        // Whom to notify (§2.2: "the assignee and the organization's operators"): the work item's
        // assignment for a person step or an escalation, the claim holder for a claimed agent step.
        detail: {
          due: iso(timer.at),
          assignedTo: tx.run.workItems.find((w) => w.stepId === timer.stepId)?.assignedTo ?? null,
          claimedBy: r.claim?.by ?? null,
          notify: "assignee-and-operators",
        },
      });
      return;
    default: {
      const unreachable: never = timer.kind;
      throw new Error(`unknown timer kind ${String(unreachable)}`);
    }
  }
}
