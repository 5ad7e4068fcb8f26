import type { CheckVerdict, Completion, RunData } from "@baton/protocol";
import { describe, expect, it } from "vitest";
import { AgreementTally, type ReportedRun } from "./agreement.ts";

/**
 * The agreement report's tally (issue #14; check.md §4 "earn trust first"; docs/check-report.md) on
 * run data written by hand, with every expected count written by hand too. The end-to-end form (a
 * scripted evaluator, real decisions, `baton report checks`) is in the conformance runner.
 */

const t = (minute: number) => new Date(Date.UTC(2026, 9, 6, 9, minute)).toISOString();
const YES = "The summary names the root cause.";
const TONE = "What is the tone?";

/** A verdict at `minute`: the worst of a yes/no and a choice result (or error, with no questions). */
function verdict(
  minute: number,
  yesNo: "pass" | "fail" | "unsure" | null,
  tone: "pass" | "fail" | "unsure" = "pass",
): CheckVerdict {
  if (yesNo === null) return { verdict: "error", advisory: true, model: "m", questions: [], at: t(minute) };
  const rank = { pass: 0, fail: 1, unsure: 2 } as const;
  const worst = rank[yesNo] >= rank[tone] ? yesNo : tone;
  return {
    verdict: worst,
    advisory: true,
    model: "m",
    questions: [
      { ask: YES, kind: "yes_no", answer: yesNo === "pass" ? 0.95 : 0.4, result: yesNo },
      { ask: TONE, kind: "choice", answer: "plain", confidence: 0.9, result: tone },
    ],
    at: t(minute),
  };
}

const work = (minute: number, check?: CheckVerdict): Completion => ({
  output: { summary: "s" },
  ...(check ? { check } : {}),
  by: "a_writer",
  at: t(minute),
});
const decision = (minute: number, d: "approved" | "rejected" | "failed"): Completion => ({
  decision: d,
  ...(d === "approved" ? {} : { note: "n" }),
  by: "ed@example.com",
  at: t(minute),
});

/** A run whose `summarize` and `review` records are given oldest first (the last is current, unless `rewound`). */
function run(
  id: string,
  summarize: Completion[],
  review: Completion[],
  options: { overlay?: CheckVerdict | null; rewound?: boolean } = {},
): ReportedRun {
  const record = (all: Completion[], rewound = false) => {
    if (all.length === 0) return undefined;
    const history = rewound ? all : all.slice(0, -1);
    return rewound ? { history } : { ...(all.at(-1) as Completion), history };
  };
  const steps: RunData["steps"] = {};
  const s = record(summarize, options.rewound);
  if (s) steps.summarize = s;
  const r = record(review);
  if (r) steps.review = r;
  return {
    id,
    data: { inputs: {}, steps },
    steps:
      options.overlay !== undefined ? { summarize: { checkOverlay: { previous: options.overlay } } } : {},
  };
}

describe("AgreementTally (issue #14; docs/check-report.md)", () => {
  it("pairs each verdict with the next approval decision on the same attempt and counts agreement, unsure and error apart", () => {
    const tally = new AgreementTally();
    // r1: pass, approved.
    tally.add(run("r1", [work(1, verdict(1, "pass"))], [decision(2, "approved")]));
    // r2: fail, rejected (rework); pass, approved.
    tally.add(
      run(
        "r2",
        [work(1, verdict(1, "fail")), work(3, verdict(3, "pass"))],
        [decision(2, "rejected"), decision(4, "approved")],
      ),
    );
    // r3: pass, rejected; fail (the tone question), approved.
    tally.add(
      run(
        "r3",
        [work(1, verdict(1, "pass")), work(3, verdict(3, "pass", "fail"))],
        [decision(2, "rejected"), decision(4, "approved")],
      ),
    );
    // r4: unsure, approved; error, rejected... then a pass nobody has decided yet.
    tally.add(
      run(
        "r4",
        [work(1, verdict(1, "unsure")), work(3, verdict(3, null)), work(5, verdict(5, "pass"))],
        [decision(2, "approved"), decision(4, "rejected")],
      ),
    );
    // r5: a completion without a verdict is no verdict; the approval after it pairs with nothing.
    tally.add(run("r5", [work(1)], [decision(2, "approved")]));

    const report = tally.report("checked", null);
    expect(report.runs).toBe(5);
    expect(report.steps).toHaveLength(1);
    const step = report.steps[0];
    expect(step).toMatchObject({
      stepId: "summarize",
      verdicts: 8,
      decided: 7,
      agree: 3,
      disagree: 2,
      agreement: 0.6,
      byVerdict: {
        pass: { approved: 2, rejected: 1, undecided: 1 },
        fail: { approved: 1, rejected: 1, undecided: 0 },
        unsure: { approved: 1, rejected: 0, undecided: 0 },
        error: { approved: 0, rejected: 1, undecided: 0 },
      },
    });
    expect(step?.questions).toEqual([
      {
        ask: YES,
        kind: "yes_no",
        // pass: r1 approved, r2b approved, r3a rejected, r3b approved, r4c undecided; fail: r2a rejected; unsure: r4a approved.
        results: {
          pass: { approved: 3, rejected: 1, undecided: 1 },
          fail: { approved: 0, rejected: 1, undecided: 0 },
          unsure: { approved: 1, rejected: 0, undecided: 0 },
        },
        agree: 4,
        disagree: 1,
        agreement: 0.8,
      },
      {
        ask: TONE,
        kind: "choice",
        // pass: r1, r2a (rejected), r2b, r3a (rejected), r4a, r4c (undecided); fail: r3b approved.
        results: {
          pass: { approved: 3, rejected: 2, undecided: 1 },
          fail: { approved: 1, rejected: 0, undecided: 0 },
          unsure: { approved: 0, rejected: 0, undecided: 0 },
        },
        agree: 3,
        disagree: 3,
        agreement: 0.5,
      },
    ]);
    expect(step?.disagreements).toEqual([
      {
        runId: "r3",
        verdict: "pass",
        decision: "rejected",
        decidedOn: "review",
        decidedBy: "ed@example.com",
        checkedAt: t(1),
        decidedAt: t(2),
        advisory: true,
      },
      {
        runId: "r3",
        verdict: "fail",
        decision: "approved",
        decidedOn: "review",
        decidedBy: "ed@example.com",
        checkedAt: t(3),
        decidedAt: t(4),
        advisory: true,
      },
    ]);
  });

  it("a failed decision judges nothing; a decision before the completion, or after the step's next completion, belongs to another attempt", () => {
    const tally = new AgreementTally();
    tally.add(run("failed", [work(1, verdict(1, "pass"))], [decision(2, "failed")]));
    // The rejection at 2 judged the completion at 1; the one at 4 follows the second attempt's completion at 3.
    tally.add(
      run(
        "attempts",
        [work(1, verdict(1, "fail")), work(3, verdict(3, "fail"))],
        [decision(2, "rejected"), decision(4, "rejected")],
      ),
    );
    // A completion reworked by a later step's rejection without an approval in between: its attempt
    // ended undecided, and the run's data holds it only in history (state null).
    tally.add(run("rewound", [work(5, verdict(5, "pass"))], [decision(1, "approved")], { rewound: true }));
    const step = tally.report("p", null).steps[0];
    expect(step?.byVerdict).toEqual({
      pass: { approved: 0, rejected: 0, undecided: 2 },
      fail: { approved: 0, rejected: 2, undecided: 0 },
      unsure: { approved: 0, rejected: 0, undecided: 0 },
      error: { approved: 0, rejected: 0, undecided: 0 },
    });
    expect(step).toMatchObject({ verdicts: 4, decided: 2, agree: 2, disagree: 0, agreement: 1 });
  });

  it("an unsure verdict still waiting on a person is not yet a verdict of a completion; the completion under it keeps its own (check.md §3)", () => {
    const tally = new AgreementTally();
    const held = verdict(6, "unsure");
    // The step completed at 1 with a pass that was approved at 2; reworked, resubmitted, and now held unsure.
    const r = run("held", [work(1, verdict(1, "pass"))], [decision(2, "approved")], {
      overlay: verdict(1, "pass"),
    });
    (r.data.steps.summarize as { check?: CheckVerdict }).check = held;
    tally.add(r);
    // A step that never completed shows only the held verdict.
    const fresh = run("fresh", [], []);
    fresh.data.steps.summarize = { check: held, history: [] };
    fresh.steps.summarize = { checkOverlay: { previous: null } };
    tally.add(fresh);
    const step = tally.report("p", null).steps[0];
    expect(step).toMatchObject({ verdicts: 1, decided: 1, agree: 1, byVerdict: { unsure: { approved: 0 } } });
  });

  it("since keeps the verdicts recorded at or after it; the runs read are still counted", () => {
    const tally = new AgreementTally(Date.parse(t(3)));
    tally.add(
      run(
        "r",
        [work(1, verdict(1, "fail")), work(3, verdict(3, "pass"))],
        [decision(2, "rejected"), decision(4, "approved")],
      ),
    );
    const report = tally.report("p", t(3));
    expect(report).toMatchObject({ process: "p", since: t(3), runs: 1 });
    expect(report.steps[0]).toMatchObject({
      verdicts: 1,
      byVerdict: { pass: { approved: 1 }, fail: { approved: 0, rejected: 0, undecided: 0 } },
    });
    expect(new AgreementTally().report("none", null)).toEqual({
      process: "none",
      since: null,
      runs: 0,
      steps: [],
    });
  });
});
