import type {
  CheckReport,
  CheckVerdict,
  Completion,
  DecisionCounts,
  QuestionAgreement,
  RunData,
  StepAgreement,
} from "@baton/protocol";
import type { StepRuntime } from "./run.ts";

/**
 * The agreement report (issue #14; profiles/check.md §4 "earn trust first": compare recorded
 * verdicts with the approvers' decisions): a pure tally over run documents, so the shell only reads
 * runs and adds them. The definition (docs/check-report.md):
 *
 * - A **verdict** is a `check` recorded on a completion of a step, in `steps.<id>` or its `history`
 *   (check.md §3: pass, unsure and advisory verdicts; a blocking fail never completes a step and is
 *   only in `handoff.check`). An unsure verdict still waiting on a person is not a completion yet.
 * - Its **decision** is the first `approved` or `rejected` decision of an approve step recorded at or
 *   after the completion and before the step's next completion (the same attempt: later work on the
 *   step is another attempt). `rejected` that reworks the step is that attempt's decision. None:
 *   `undecided`. A `failed` decision ends the run and judges nothing: the verdict stays undecided.
 * - **Agreement**: pass·approved and fail·rejected agree; pass·rejected and fail·approved disagree;
 *   the rate is agree / (agree + disagree). Unsure and error verdicts (and unsure question results)
 *   are counted apart, with the decisions that followed them, and never in the rate.
 */

/** What the tally reads of a run: its id, its run data, and the steps' runtime (for an unsure verdict still held). */
export interface ReportedRun {
  id: string;
  data: RunData;
  steps: Record<string, Pick<StepRuntime, "checkOverlay">>;
}

interface Decided {
  stepId: string;
  decision: "approved" | "rejected";
  by: string;
  at: number;
  iso: string;
}

const counts = (): DecisionCounts => ({ approved: 0, rejected: 0, undecided: 0 });
const rate = (agree: number, disagree: number) =>
  agree + disagree === 0 ? null : agree / (agree + disagree);

/** Whether a result and a decision agree (true), disagree (false), or neither counts (null). */
function agrees(result: string, decision: Decided | null): boolean | null {
  if (!decision || (result !== "pass" && result !== "fail")) return null;
  return (result === "pass") === (decision.decision === "approved");
}

/** A step's completions, oldest first: its history, then its current fields (with the check it had before an unsure overlay). */
function completionsOf(record: RunData["steps"][string], overlay: StepRuntime["checkOverlay"]): Completion[] {
  const { history, ...current } = record;
  const all = [...history];
  if (current.at !== undefined) {
    // While an unsure verdict waits on a person it is laid over the record (check.md §3); the
    // completion itself had the check the overlay remembers.
    if (overlay) {
      const { check: _shown, ...rest } = current;
      all.push(overlay.previous ? { ...rest, check: overlay.previous } : rest);
    } else all.push(current);
  }
  return all;
}

/** Tallies the verdicts of runs added one by one into a {@link CheckReport}. */
export class AgreementTally {
  private runs = 0;
  private readonly steps = new Map<string, StepAgreement>();
  private readonly questions = new Map<string, Map<string, QuestionAgreement>>();

  /** @param since Only verdicts recorded at or after this instant count (epoch ms); null: all. */
  constructor(private readonly since: number | null = null) {}

  /** Adds one run's verdicts and decisions. */
  add(run: ReportedRun): void {
    this.runs += 1;
    const decisions: Decided[] = [];
    for (const [stepId, record] of Object.entries(run.data.steps)) {
      for (const c of [...record.history, record]) {
        if ((c.decision === "approved" || c.decision === "rejected") && c.at !== undefined) {
          decisions.push({ stepId, decision: c.decision, by: c.by ?? "", at: Date.parse(c.at), iso: c.at });
        }
      }
    }
    decisions.sort((a, b) => a.at - b.at);
    for (const [stepId, record] of Object.entries(run.data.steps)) {
      const completions = completionsOf(record, run.steps[stepId]?.checkOverlay ?? null);
      completions.forEach((c, i) => {
        if (!c.check || c.at === undefined) return;
        if (this.since !== null && Date.parse(c.check.at) < this.since) return;
        const from = Date.parse(c.at);
        const nextAt = completions[i + 1]?.at;
        const until = nextAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(nextAt);
        const decision = decisions.find((d) => d.stepId !== stepId && d.at >= from && d.at < until) ?? null;
        this.count(run.id, stepId, c.at, c.check, decision);
      });
    }
  }

  private count(runId: string, stepId: string, at: string, check: CheckVerdict, decision: Decided | null) {
    let step = this.steps.get(stepId);
    if (!step) {
      step = {
        stepId,
        verdicts: 0,
        decided: 0,
        agree: 0,
        disagree: 0,
        agreement: null,
        byVerdict: { pass: counts(), fail: counts(), unsure: counts(), error: counts() },
        questions: [],
        disagreements: [],
      };
      this.steps.set(stepId, step);
      this.questions.set(stepId, new Map());
    }
    const outcome = decision ? decision.decision : "undecided";
    step.verdicts += 1;
    if (decision) step.decided += 1;
    step.byVerdict[check.verdict][outcome] += 1;
    const verdictAgrees = agrees(check.verdict, decision);
    if (verdictAgrees === true) step.agree += 1;
    if (verdictAgrees === false && decision) {
      step.disagree += 1;
      step.disagreements.push({
        runId,
        verdict: check.verdict as "pass" | "fail",
        decision: decision.decision,
        decidedOn: decision.stepId,
        decidedBy: decision.by,
        checkedAt: at,
        decidedAt: decision.iso,
        advisory: check.advisory,
      });
    }
    const byAsk = this.questions.get(stepId) as Map<string, QuestionAgreement>;
    for (const q of check.questions) {
      const key = `${q.kind}\u0000${q.ask}`;
      let question = byAsk.get(key);
      if (!question) {
        question = {
          ask: q.ask,
          kind: q.kind,
          agree: 0,
          disagree: 0,
          agreement: null,
          results: { pass: counts(), fail: counts(), unsure: counts() },
        };
        byAsk.set(key, question);
      }
      question.results[q.result][outcome] += 1;
      const questionAgrees = agrees(q.result, decision);
      if (questionAgrees === true) question.agree += 1;
      if (questionAgrees === false) question.disagree += 1;
    }
  }

  /** The report so far: `since` as asked (RFC 3339) or null. */
  report(process: string, since: string | null): CheckReport {
    const steps = [...this.steps.values()].map((s) => ({
      ...s,
      agreement: rate(s.agree, s.disagree),
      questions: [...(this.questions.get(s.stepId)?.values() ?? [])].map((q) => ({
        ...q,
        agreement: rate(q.agree, q.disagree),
      })),
      disagreements: [...s.disagreements].sort((a, b) => a.checkedAt.localeCompare(b.checkedAt)),
    }));
    return { process, since, runs: this.runs, steps };
  }
}
