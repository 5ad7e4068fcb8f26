import { schemaProblems } from "@baton/conformance/schemas";
import type { CheckDef } from "@baton/process";
import { type CheckAnswers, ok, type RunData } from "@baton/protocol";
import { describe, expect, it } from "vitest";
import { DEFAULT_CHECK_LIMITS, shownRunData, verdictOf } from "./check.ts";
import type { Command } from "./commands.ts";
import { apply } from "./machine.ts";
import { jsonBytes } from "./snapshot.ts";
import { checkedWork, PARALLEL_CHECKED } from "./test-processes.ts";
import {
  agent,
  answering,
  CONFIG,
  fixture,
  HOUR,
  MINUTE,
  MODEL,
  operator,
  person,
  type Script,
  Sim,
  silent,
  T0,
} from "./test-support.ts";
import { handoffOf } from "./view.ts";

/**
 * The check profile in the core (profiles/check.md §2–§5): the two-phase flow (the core asks, the
 * shell has the evaluator answer, the answers come back with the command), the verdict as the worst
 * question, what pass, fail, unsure and error do, advisory checks, the thresholds and their server
 * defaults, the run data the evaluator is shown, and the person's side of an escalated check.
 */

const VENDOR = fixture("vendor-check");
const screener = agent("a_screener");
const finance = person("fin@example.com", ["finance-approver"]);
const ops = operator();
const FILE = { kind: "file" as const, ref: "f_report" };
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** Answers to vendor-check's three questions (yes/no 0.9/0.5, choice, rubric pass 2 confidence 0.8). */
const PASS = answering(
  { answer: 0.97 },
  { answer: "states", confidence: 0.91 },
  { answer: 2, confidence: 0.9 },
);
const FAIL = answering(
  { answer: 0.12 },
  { answer: "hedges", confidence: 0.9 },
  { answer: 1, confidence: 0.85 },
);
const UNSURE = answering(
  { answer: 0.62 },
  { answer: "states", confidence: 0.91 },
  { answer: 2, confidence: 0.9 },
);

function vendor(): Sim {
  const sim = Sim.start(VENDOR, person("mira@example.com"), { vendorName: "Acme", amount: 48000 });
  sim.files.set("f_report", { status: "ok", sha256: "4f1c" });
  return sim;
}

function submission(claimId: string): Extract<Command, { type: "submit" }> {
  return {
    type: "submit",
    claimId,
    output: { cleared: true, summary: "Cleared on OFAC and EU by legal name." },
    evidence: [FILE],
    summary: "Searched both lists by legal name and two aliases. No hits. Report attached.",
    next: "approve",
    reason: "Vendor is cleared.",
  };
}

/** Claims check_vendor at T0 + 1 min and submits it at T0 + 2 min through the check. */
function screened(sim: Sim, script: Script) {
  sim.advance(MINUTE);
  const claimId = sim.claim(screener, "check_vendor");
  sim.advance(MINUTE);
  return { claimId, ...sim.checked(screener, submission(claimId), script) };
}

const PASSED_QUESTIONS = [
  {
    ask: "The cleared verdict matches what the attached report says.",
    kind: "yes_no",
    answer: 0.97,
    result: "pass",
  },
  { ask: "What does the summary do?", kind: "choice", answer: "states", confidence: 0.91, result: "pass" },
  { ask: "How complete is the screening?", kind: "rubric", answer: 2, confidence: 0.9, result: "pass" },
];

describe("two phases: the core asks, the evaluator answers, the command carries the answers (check.md §3)", () => {
  it("the objective rules come first: a submission that breaks one is not_accepted and nothing is asked", () => {
    const sim = vendor();
    const claimId = sim.claim(screener, "check_vendor");
    const outcome = sim.apply(screener, { ...submission(claimId), evidence: [] });
    expect(outcome.needsCheck).toBeUndefined();
    expect(outcome.error).toMatchObject({ code: "not_accepted", issues: ["evidence: file required"] });
  });

  it("a submission that passes them waits for the evaluator: nothing applied, and the request shows exactly what §2 lists", () => {
    const sim = vendor();
    sim.advance(MINUTE);
    const claimId = sim.claim(screener, "check_vendor");
    const before = sim.run;
    const outcome = sim.apply(screener, submission(claimId));
    expect(outcome).toMatchObject({ changed: false, value: null, error: null, events: [], fired: [] });
    expect(outcome.run).toBe(before);
    const request = outcome.needsCheck;
    expect(request).toEqual({
      key: expect.stringMatching(/^[0-9a-f]{64}$/),
      runId: "r_test",
      stepId: "check_vendor",
      // The questions without their thresholds: those are the server's, and would only bias the model.
      questions: [
        { kind: "yes_no", ask: "The cleared verdict matches what the attached report says." },
        {
          kind: "choice",
          ask: "What does the summary do?",
          options: {
            states: "States the verdict and the lists checked.",
            hedges: "Avoids a verdict or qualifies it heavily.",
            unclear: "Cannot tell.",
          },
        },
        {
          kind: "rubric",
          ask: "How complete is the screening?",
          levels: [
            "Neither list is clearly covered.",
            "One list is covered.",
            "Both lists are covered with the search terms stated.",
          ],
        },
      ],
      material: {
        instructions: VENDOR.process.steps[0]?.kind === "agent" ? VENDOR.process.steps[0].instructions : "",
        body: VENDOR.process.body,
        runData: { inputs: { vendorName: "Acme", amount: 48000 }, steps: {} },
        truncated: false,
        // Evidence references only: no sha256, no url; the evaluator does not open files.
        submission: {
          output: { cleared: true, summary: "Cleared on OFAC and EU by legal name." },
          summary: "Searched both lists by legal name and two aliases. No hits. Report attached.",
          evidence: [{ kind: "file", ref: "f_report" }],
        },
      },
    });
  });

  it("answers for other material are not used: the core asks again", () => {
    const sim = vendor();
    const claimId = sim.claim(screener, "check_vendor");
    const first = sim.apply(screener, submission(claimId));
    const answers = PASS(first.needsCheck as NonNullable<typeof first.needsCheck>);
    const other = sim.apply(screener, {
      ...submission(claimId),
      output: { cleared: false, summary: "Hit on EU list." },
      next: "decline",
      check: answers,
    });
    expect(other.needsCheck?.key).not.toBe(answers.key);
    expect(other.changed).toBe(false);
  });

  it("the same command with the same answers gives the same outcome: a replay from the journal never needs the model", () => {
    const sim = vendor();
    const claimId = sim.claim(screener, "check_vendor");
    const request = sim.apply(screener, submission(claimId)).needsCheck;
    if (!request) throw new Error("no request");
    const command = { ...submission(claimId), check: PASS(request) };
    const ctx = { actor: screener, now: sim.now, def: VENDOR, config: CONFIG, files: sim.files };
    const a = apply(sim.run, command, ctx);
    const b = apply(sim.run, command, ctx);
    expect(a.needsCheck).toBeUndefined();
    expect(b).toEqual(a);
  });
});

describe("verdicts (check.md §3)", () => {
  it("pass: the step completes as usual, the verdict recorded as steps.<id>.check with model and time", () => {
    const sim = vendor();
    const { outcome, request } = screened(sim, PASS);
    expect(request).not.toBeNull();
    expect(outcome.error).toBeNull();
    const view = sim.view();
    expect(view.data.steps.check_vendor).toEqual({
      output: { cleared: true, summary: "Cleared on OFAC and EU by legal name." },
      evidence: [{ kind: "file", ref: "f_report", sha256: "4f1c" }],
      summary: "Searched both lists by legal name and two aliases. No hits. Report attached.",
      next: "approve",
      reason: "Vendor is cleared.",
      check: {
        verdict: "pass",
        advisory: false,
        model: MODEL,
        questions: PASSED_QUESTIONS,
        at: at(2 * MINUTE),
      },
      by: "a_screener",
      at: at(2 * MINUTE),
      history: [],
    });
    expect(sim.states()).toMatchObject({ check_vendor: "done", approve: "waiting" });
    expect(outcome.events.find((e) => e.type === "step.checked")).toMatchObject({
      stepId: "check_vendor",
      detail: { verdict: "pass", advisory: false, model: MODEL },
    });
    expect(schemaProblems("submit", ok(view))).toEqual([]);
  });

  it("fail: not_accepted with one issue per failed question in the exact form of §3; run data unchanged; the verdict and issues in handoff; the claim stands", () => {
    const sim = vendor();
    const dataBefore = sim.run.data;
    const { outcome, claimId } = screened(sim, FAIL);
    const lines = [
      "check: The cleared verdict matches what the attached report says. → no (0.12)",
      "check: What does the summary do? → hedges (0.9)",
      "check: How complete is the screening? → level 1: One list is covered. (0.85)",
    ];
    expect(outcome.error).toEqual({
      code: "not_accepted",
      message: "the submission for check_vendor was not accepted; nothing changed",
      issues: lines,
    });
    expect(sim.run.data).toEqual(dataBefore);
    // Nothing a reader sees changed: `updatedAt` is still the claim's.
    expect(sim.view().run.updatedAt).toBe(at(MINUTE));
    const verdict = {
      verdict: "fail",
      advisory: false,
      model: MODEL,
      questions: [
        {
          ask: "The cleared verdict matches what the attached report says.",
          kind: "yes_no",
          answer: 0.12,
          result: "fail",
        },
        {
          ask: "What does the summary do?",
          kind: "choice",
          answer: "hedges",
          confidence: 0.9,
          result: "fail",
        },
        {
          ask: "How complete is the screening?",
          kind: "rubric",
          answer: 1,
          confidence: 0.85,
          result: "fail",
        },
      ],
      at: at(2 * MINUTE),
    };
    expect(handoffOf(sim.run, "check_vendor")).toEqual({ issues: lines, check: verdict });
    expect(sim.states().check_vendor).toBe("claimed");
    // The same attempt continues on the same claim, and now passes.
    const again = sim.checked(screener, submission(claimId), PASS);
    expect(again.outcome.error).toBeNull();
    expect(sim.states().check_vendor).toBe("done");
  });

  it("unsure: ok with the run view; the submission held as the candidate and the step escalated as escalate does, the verdict shown in run data", () => {
    const sim = vendor();
    const { outcome, claimId } = screened(sim, UNSURE);
    expect(outcome.error).toBeNull();
    expect(outcome.value).toEqual({ kind: "view" });
    const view = sim.view();
    const verdict = {
      verdict: "unsure",
      advisory: false,
      model: MODEL,
      questions: [
        { ...PASSED_QUESTIONS[0], answer: 0.62, result: "unsure" },
        PASSED_QUESTIONS[1],
        PASSED_QUESTIONS[2],
      ],
      at: at(2 * MINUTE),
    };
    expect(view.run.state).toBe("waiting");
    expect(sim.states()).toMatchObject({ check_vendor: "waiting", approve: null });
    expect(view.workItems).toHaveLength(1);
    expect(view.workItems[0]).toMatchObject({
      stepId: "check_vendor",
      kind: "agent",
      assignedTo: { group: "operators" },
      escalation: {
        note: expect.stringContaining(
          "check: The cleared verdict matches what the attached report says. → no (0.62)",
        ),
        by: "a_screener",
        at: at(2 * MINUTE),
        check: verdict,
        candidate: {
          output: { cleared: true, summary: "Cleared on OFAC and EU by legal name." },
          evidence: [{ kind: "file", ref: "f_report", sha256: "4f1c" }],
          summary: "Searched both lists by legal name and two aliases. No hits. Report attached.",
          next: "approve",
          reason: "Vendor is cleared.",
        },
      },
      decide: { decisions: ["returned", "completed", "failed"] },
    });
    // "While an unsure verdict waits on a person, run data shows it as steps.<id>.check."
    expect(view.data.steps.check_vendor).toEqual({ check: verdict, history: [] });
    // The agent lost its claim, as with escalate.
    expect(sim.refused(screener, submission(claimId)).code).toBe("stale");
    expect(schemaProblems("submit", ok(view))).toEqual([]);
  });

  it("error: the evaluator did not answer — retry, nothing changed, nothing recorded", () => {
    const sim = vendor();
    const before = sim.run;
    const { outcome } = screened(sim, silent);
    expect(outcome.error?.code).toBe("retry");
    expect(outcome.changed).toBe(false);
    expect(outcome.events).toEqual([]);
    expect(sim.run.steps.check_vendor?.handoff).toBeNull();
    expect(sim.run.data).toEqual(before.data);
    expect(sim.states().check_vendor).toBe("claimed");
  });

  it("an answer outside the schema, or the wrong number of answers, counts as no answer (error)", () => {
    for (const script of [
      answering({ answer: 1.4 }, { answer: "states", confidence: 0.91 }, { answer: 2, confidence: 0.9 }),
      answering({ answer: 0.97 }, { answer: "maybe", confidence: 0.91 }, { answer: 2, confidence: 0.9 }),
      answering({ answer: 0.97 }, { answer: "states" }, { answer: 2, confidence: 0.9 }),
      answering({ answer: 0.97 }, { answer: "states", confidence: 0.91 }, { answer: 3, confidence: 0.9 }),
      answering({ answer: 0.97 }, { answer: "states", confidence: 0.91 }),
    ]) {
      const { outcome } = screened(vendor(), script);
      expect(outcome.error?.code).toBe("retry");
    }
  });
});

describe("the person's side of an unsure check (check.md §3, tools.md workItems[].escalation)", () => {
  function held() {
    const sim = vendor();
    screened(sim, UNSURE);
    sim.advance(MINUTE);
    return sim;
  }

  it("completed without output takes the candidate, is not checked again, and records the unsure verdict with the completion", () => {
    const sim = held();
    const verdict = sim.run.steps.check_vendor?.escalation?.check;
    // No answers are carried and none are asked for.
    const outcome = sim.decide(ops, "check_vendor", "completed");
    expect(outcome.needsCheck).toBeUndefined();
    expect(outcome.error).toBeNull();
    expect(sim.view().data.steps.check_vendor).toEqual({
      output: { cleared: true, summary: "Cleared on OFAC and EU by legal name." },
      evidence: [{ kind: "file", ref: "f_report", sha256: "4f1c" }],
      summary: "Searched both lists by legal name and two aliases. No hits. Report attached.",
      next: "approve",
      reason: "Vendor is cleared.",
      check: verdict,
      by: ops.id,
      at: at(3 * MINUTE),
      history: [],
    });
    expect(sim.states()).toMatchObject({ check_vendor: "done", approve: "waiting" });
  });

  it("completed with the person's own output records theirs, under the same acceptance", () => {
    const sim = held();
    const wrong = sim.decide(ops, "check_vendor", "completed", { output: { cleared: false } });
    expect(wrong.error).toMatchObject({ code: "not_accepted" });
    expect(wrong.error?.issues).toEqual([
      "output.summary: missing",
      "evidence: file required",
      "next: required, one of approve, decline",
      "reason: required",
    ]);
    const outcome = sim.decide(ops, "check_vendor", "completed", {
      output: { cleared: false, summary: "EU list hit on an alias." },
      evidence: [FILE],
      next: "decline",
      reason: "Alias matches an EU listing.",
    });
    expect(outcome.error).toBeNull();
    expect(sim.view().run).toMatchObject({ state: "ended", outcome: "declined" });
    expect(sim.view().data.steps.check_vendor?.output).toEqual({
      cleared: false,
      summary: "EU list hit on an alias.",
    });
  });

  it("returned: ready again with the note and the verdict in the handoff; the verdict leaves run data; due does not restart", () => {
    const sim = held();
    const verdict = sim.run.steps.check_vendor?.escalation?.check;
    sim.decide(ops, "check_vendor", "returned", { note: "Attach the EU search terms." });
    expect(sim.states().check_vendor).toBe("ready");
    expect(handoffOf(sim.run, "check_vendor")).toEqual({
      returned: { note: "Attach the EU search terms.", by: ops.id, at: at(3 * MINUTE) },
      check: verdict,
      // "the agent's handoff.issues carries the same lines": the questions that did not pass.
      issues: ["check: The cleared verdict matches what the attached report says. → no (0.62)"],
    });
    expect(sim.view().data.steps.check_vendor).toBeUndefined();
    expect(sim.run.steps.check_vendor?.readySince).toBe(T0);
    // The next submission is checked again.
    const claimId = sim.claim(screener, "check_vendor");
    expect(sim.checked(screener, submission(claimId), PASS).outcome.error).toBeNull();
    expect(sim.view().data.steps.check_vendor?.check?.verdict).toBe("pass");
  });

  it("failed ends the run, and the held verdict leaves the record", () => {
    const sim = held();
    sim.decide(ops, "check_vendor", "failed", { note: "Vendor refuses screening." });
    expect(sim.view().run).toMatchObject({ state: "ended", outcome: "failed" });
    expect(sim.view().data.steps.check_vendor).toEqual({
      decision: "failed",
      note: "Vendor refuses screening.",
      by: ops.id,
      at: at(3 * MINUTE),
      history: [],
    });
  });

  it("an agent's own escalation completed by a person is not checked either", () => {
    const sim = vendor();
    const claimId = sim.claim(screener, "check_vendor");
    sim.ok(screener, { type: "escalate", claimId, note: "The EU list is down." });
    const outcome = sim.decide(ops, "check_vendor", "completed", {
      output: { cleared: true, summary: "Checked by hand." },
      evidence: [FILE],
      next: "approve",
      reason: "Cleared by hand.",
    });
    expect(outcome.needsCheck).toBeUndefined();
    expect(outcome.error).toBeNull();
    expect(sim.view().data.steps.check_vendor?.check).toBeUndefined();
  });

  it("rework through on_reject is a fresh attempt: the handoff starts empty and the earlier verdict is in history", () => {
    const sim = vendor();
    screened(sim, PASS);
    sim.decide(finance, "approve", "rejected", { note: "Screen the parent company too." });
    expect(sim.states().check_vendor).toBe("ready");
    expect(handoffOf(sim.run, "check_vendor")).toBeNull();
    const first = sim.run.data.steps.check_vendor?.check;
    // An unsure verdict on the new attempt shows over the old completion while a person decides...
    const claimId = sim.claim(screener, "check_vendor");
    const unsure = sim.checked(screener, submission(claimId), UNSURE);
    expect(unsure.outcome.error).toBeNull();
    const shown = sim.view().data.steps.check_vendor;
    expect(shown?.check?.verdict).toBe("unsure");
    expect(shown?.output).toEqual({ cleared: true, summary: "Cleared on OFAC and EU by legal name." });
    // ...and once decided, the old completion goes to history with its own verdict.
    sim.decide(ops, "check_vendor", "completed");
    const record = sim.view().data.steps.check_vendor;
    expect(record?.check?.verdict).toBe("unsure");
    expect(record?.history).toHaveLength(1);
    expect(record?.history[0]?.check).toEqual(first);
  });
});

describe("a person's task is checked (check.md §3: 'A person's task submission gets the same refusal')", () => {
  const reviewer = person("rev@example.com", ["reviewer"]);
  const OWNED = answering({ answer: 0.95 });

  function atReview(advisory = false) {
    const sim = Sim.start(checkedWork(advisory), person("mira@example.com"));
    const claimId = sim.claim(agent("a_writer"), "summarize");
    const done = sim.checked(
      agent("a_writer"),
      { type: "submit", claimId, output: { summary: "Disk full." }, summary: "Wrote it." },
      answering({ answer: 0.95 }),
    );
    expect(done.outcome.error).toBeNull();
    return sim;
  }

  const completed = (sim: Sim) => ({
    type: "decide" as const,
    workItemId: sim.item("review").id,
    snapshot: sim.run.snapshot,
    decision: "completed" as const,
    output: { actions: ["Rotate logs"] },
  });

  it("a completed task waits for the evaluator and passes", () => {
    const sim = atReview();
    const { outcome, request } = sim.checked(reviewer, completed(sim), OWNED);
    expect(request?.material.submission).toEqual({
      output: { actions: ["Rotate logs"] },
      summary: null,
      evidence: [],
    });
    expect(outcome.error).toBeNull();
    expect(sim.view().run.outcome).toBe("reviewed");
    expect(sim.view().data.steps.review?.check).toMatchObject({
      verdict: "pass",
      questions: [{ answer: 0.95 }],
    });
  });

  it("fail: not_accepted; the work item carries handoff.check and the issues", () => {
    const sim = atReview();
    const { outcome } = sim.checked(reviewer, completed(sim), answering({ answer: 0.2 }));
    expect(outcome.error?.issues).toEqual(["check: Every action item has an owner. → no (0.2)"]);
    const item = sim.view().workItems[0];
    expect(item?.handoff).toMatchObject({
      issues: ["check: Every action item has an owner. → no (0.2)"],
      check: { verdict: "fail" },
    });
    expect(schemaProblems("get_run", ok(sim.view()))).toEqual([]);
  });

  it("unsure: the task's item is decided and an escalation takes its place; the operator's completion is not checked", () => {
    const sim = atReview();
    const original = sim.item("review");
    sim.advance(HOUR);
    const { outcome } = sim.checked(reviewer, completed(sim), answering({ answer: 0.6 }));
    expect(outcome.error).toBeNull();
    const view = sim.view();
    expect(view.workItems).toHaveLength(1);
    expect(view.workItems[0]).toMatchObject({
      stepId: "review",
      kind: "task",
      assignedTo: { group: "operators" },
      escalation: {
        by: reviewer.id,
        check: { verdict: "unsure" },
        candidate: { output: { actions: ["Rotate logs"] } },
      },
      decide: { decisions: ["returned", "completed", "failed"] },
      due: at(HOUR * 24),
    });
    expect(view.workItems[0]?.id).not.toBe(original.id);
    expect(schemaProblems("get_run", ok(view))).toEqual([]);
    // The first decision on the original item won: a second one is already_decided.
    const again = sim.apply(reviewer, { ...completed(sim), workItemId: original.id });
    expect(again.error).toMatchObject({ code: "conflict", issues: ["already_decided"] });
    const decided = sim.decide(ops, "review", "completed");
    expect(decided.needsCheck).toBeUndefined();
    expect(sim.view().run.outcome).toBe("reviewed");
  });

  it("returned: the task goes back to its assignee with handoff.returned and handoff.check, its due unchanged", () => {
    const sim = atReview();
    sim.checked(reviewer, completed(sim), answering({ answer: 0.6 }));
    sim.decide(ops, "review", "returned", { note: "Name an owner for each item." });
    const item = sim.view().workItems[0];
    expect(item).toMatchObject({
      stepId: "review",
      kind: "task",
      assignedTo: { group: "reviewer" },
      escalation: null,
      handoff: {
        returned: { note: "Name an owner for each item." },
        check: { verdict: "unsure" },
        issues: ["check: Every action item has an owner. → no (0.6)"],
      },
      decide: { decisions: ["completed", "failed"] },
      due: at(24 * HOUR),
    });
  });

  it("advisory: fail, unsure and error are recorded and none blocks", () => {
    for (const [script, verdict] of [
      [answering({ answer: 0.2 }), "fail"],
      [answering({ answer: 0.6 }), "unsure"],
      [silent, "error"],
    ] as const) {
      const sim = atReview(true);
      const { outcome } = sim.checked(reviewer, completed(sim), script);
      expect(outcome.error).toBeNull();
      expect(sim.view().run.outcome).toBe("reviewed");
      expect(sim.view().data.steps.review?.check).toMatchObject({ verdict, advisory: true, model: MODEL });
      expect(schemaProblems("decide", ok(sim.view()))).toEqual([]);
    }
  });
});

describe("thresholds and their server defaults (check.md §2, §5 describe.limits)", () => {
  const yesNo = (pass: number | null, fail: number | null): CheckDef => ({
    questions: [{ kind: "yes_no", ask: "Q?", pass, fail }],
    advisory: false,
  });
  const answers = (
    ...a: CheckAnswers extends infer T ? (T extends { answers: infer A } ? A : never) : never
  ) => ({ key: "k", model: MODEL, answers: a }) as CheckAnswers;
  const resultOf = (check: CheckDef, a: CheckAnswers, limits = DEFAULT_CHECK_LIMITS) =>
    verdictOf(check, a, limits, false, "t").questions.map((q) => q.result);

  it("defaults: checkPass 0.9, checkFail none, checkConfidence 0.8, checkStateBytes 64 KiB", () => {
    expect(DEFAULT_CHECK_LIMITS).toEqual({ pass: 0.9, fail: null, confidence: 0.8, stateBytes: 65_536 });
  });

  it("yes/no: at or above pass passes; without fail, below pass fails; with fail, between is unsure", () => {
    expect(resultOf(yesNo(null, null), answers({ answer: 0.9 }))).toEqual(["pass"]);
    expect(resultOf(yesNo(null, null), answers({ answer: 0.89 }))).toEqual(["fail"]);
    expect(resultOf(yesNo(0.7, 0.3), answers({ answer: 0.3 }))).toEqual(["unsure"]);
    expect(resultOf(yesNo(0.7, 0.3), answers({ answer: 0.29 }))).toEqual(["fail"]);
    // The server's checkFail fills a question without one.
    const limits = { ...DEFAULT_CHECK_LIMITS, pass: 0.8, fail: 0.5 };
    expect(resultOf(yesNo(null, null), answers({ answer: 0.6 }), limits)).toEqual(["unsure"]);
    expect(resultOf(yesNo(null, null), answers({ answer: 0.85 }), limits)).toEqual(["pass"]);
    expect(resultOf(yesNo(0.95, null), answers({ answer: 0.4 }), limits)).toEqual(["fail"]);
  });

  it("choice: pass names pass, unsure names are unsure, any other fails; below the confidence is unsure", () => {
    const choice: CheckDef = {
      advisory: false,
      questions: [
        {
          kind: "choice",
          ask: "Which?",
          options: { a: "A", b: "B", c: "C" },
          pass: ["a"],
          unsure: ["c"],
          confidence: null,
        },
      ],
    };
    expect(resultOf(choice, answers({ answer: "a", confidence: 0.8 }))).toEqual(["pass"]);
    expect(resultOf(choice, answers({ answer: "b", confidence: 0.9 }))).toEqual(["fail"]);
    expect(resultOf(choice, answers({ answer: "c", confidence: 0.9 }))).toEqual(["unsure"]);
    expect(resultOf(choice, answers({ answer: "a", confidence: 0.79 }))).toEqual(["unsure"]);
    expect(resultOf(choice, answers({ answer: "b", confidence: 0.79 }))).toEqual(["unsure"]);
  });

  it("rubric: at or above the pass level passes, below fails; below the question's confidence is unsure", () => {
    const rubric: CheckDef = {
      advisory: false,
      questions: [
        { kind: "rubric", ask: "How far?", levels: ["0", "1", "2", "3"], pass: 2, confidence: 0.6 },
      ],
    };
    expect(resultOf(rubric, answers({ answer: 2, confidence: 0.6 }))).toEqual(["pass"]);
    expect(resultOf(rubric, answers({ answer: 1, confidence: 0.9 }))).toEqual(["fail"]);
    expect(resultOf(rubric, answers({ answer: 3, confidence: 0.59 }))).toEqual(["unsure"]);
  });

  it("the verdict is the worst question: unsure outranks fail, fail outranks pass", () => {
    const three: CheckDef = {
      advisory: false,
      questions: [
        yesNo(0.7, 0.3).questions[0],
        yesNo(0.7, 0.3).questions[0],
        yesNo(0.7, 0.3).questions[0],
      ].filter((q) => q !== undefined),
    };
    const verdict = (...p: number[]) =>
      verdictOf(three, answers(...p.map((answer) => ({ answer }))), DEFAULT_CHECK_LIMITS, false, "t").verdict;
    expect(verdict(0.9, 0.9, 0.9)).toBe("pass");
    expect(verdict(0.9, 0.1, 0.9)).toBe("fail");
    expect(verdict(0.5, 0.1, 0.9)).toBe("unsure");
    expect(verdict(0.1, 0.1, 0.5)).toBe("unsure");
  });

  it("the server's limits come from the engine's config", () => {
    const sim = Sim.start(
      checkedWork(),
      person("mira@example.com"),
      {},
      {
        config: { ...CONFIG, check: { pass: 0.5, fail: null, confidence: 0.8, stateBytes: 65_536 } },
      },
    );
    const claimId = sim.claim(agent("a_writer"), "summarize");
    const { outcome } = sim.checked(
      agent("a_writer"),
      { type: "submit", claimId, output: { summary: "Disk full." }, summary: "Wrote it." },
      answering({ answer: 0.55 }),
    );
    expect(outcome.error).toBeNull();
    expect(sim.run.data.steps.summarize?.check?.verdict).toBe("pass");
  });
});

describe("the run data the evaluator is shown (check.md §5 checkStateBytes)", () => {
  const record = (at: string, size: number) => ({
    output: { text: "x".repeat(size) },
    by: "a",
    at,
    history: [],
  });
  const data: RunData = {
    inputs: { id: "R-1" },
    steps: {
      late: record("2026-10-06T12:00:00.000Z", 100),
      early: record("2026-10-06T09:00:00.000Z", 100),
      middle: record("2026-10-06T10:00:00.000Z", 100),
    },
  };

  it("all of it when it fits", () => {
    expect(shownRunData(data, jsonBytes(data))).toEqual({ runData: data, truncated: false });
  });

  it("oldest step records dropped first until it fits; inputs kept; just one byte short drops one record", () => {
    const full = jsonBytes(data);
    const one = shownRunData(data, full - 1);
    expect(one.truncated).toBe(true);
    expect(Object.keys(one.runData.steps).sort()).toEqual(["late", "middle"]);
    expect(jsonBytes(one.runData)).toBeLessThanOrEqual(full - 1);
    const lateOnly = { inputs: data.inputs, steps: { late: data.steps.late } };
    const two = shownRunData(data, jsonBytes(lateOnly));
    expect(two).toEqual({ runData: lateOnly, truncated: true });
    // Inputs are kept even when nothing else fits.
    expect(shownRunData(data, 10)).toEqual({
      runData: { inputs: { id: "R-1" }, steps: {} },
      truncated: true,
    });
  });

  it("the truncation is recorded on the verdict", () => {
    const sim = Sim.start(
      checkedWork(),
      person("mira@example.com"),
      {},
      {
        config: { ...CONFIG, check: { ...DEFAULT_CHECK_LIMITS, stateBytes: 40 } },
      },
    );
    const claimId = sim.claim(agent("a_writer"), "summarize");
    sim.checked(
      agent("a_writer"),
      { type: "submit", claimId, output: { summary: "Disk full." }, summary: "Wrote it." },
      answering({ answer: 0.95 }),
    );
    const { request } = sim.checked(
      person("rev@example.com", ["reviewer"]),
      {
        type: "decide",
        workItemId: sim.item("review").id,
        snapshot: sim.run.snapshot,
        decision: "completed",
        output: { actions: ["a"] },
      },
      answering({ answer: 0.95 }),
    );
    expect(request?.material).toMatchObject({ truncated: true, runData: { inputs: {}, steps: {} } });
    expect(sim.run.data.steps.review?.check?.truncated).toBe(true);
    expect(sim.run.data.steps.summarize?.check?.truncated).toBeUndefined();
  });
});

describe("the vendor-check fixture end to end through the core (check.md §3; conformance fixture)", () => {
  it("error, then fail, then pass; finance rejects; the fresh attempt is unsure, a person completes it; finance approves: onboarded", () => {
    const sim = vendor();
    const claimId = sim.claim(screener, "check_vendor");
    const send = (script: Script) => sim.checked(screener, submission(claimId), script).outcome;
    expect(send(silent).error?.code).toBe("retry");
    expect(send(FAIL).error?.code).toBe("not_accepted");
    expect(send(PASS).error).toBeNull();
    expect(sim.states()).toMatchObject({ check_vendor: "done", approve: "waiting" });
    // The approver sees the verdict before deciding (check.md §4 pre-screen).
    expect(sim.view().data.steps.check_vendor?.check?.verdict).toBe("pass");
    sim.decide(finance, "approve", "rejected", { note: "Screen the parent company too." });
    const second = sim.claim(screener, "check_vendor");
    expect(sim.checked(screener, submission(second), UNSURE).outcome.error).toBeNull();
    expect(sim.view().workItems.map((w) => [w.stepId, w.escalation?.check?.verdict])).toEqual([
      ["check_vendor", "unsure"],
    ]);
    sim.decide(ops, "check_vendor", "completed");
    sim.decide(finance, "approve", "approved");
    const end = sim.view();
    expect(end.run).toMatchObject({ state: "ended", outcome: "onboarded" });
    expect(end.data.steps.check_vendor?.history.map((h) => h.check?.verdict)).toEqual(["pass"]);
    expect(end.data.steps.check_vendor?.check?.verdict).toBe("unsure");
    expect(end.data.steps.approve?.history.map((h) => h.decision)).toEqual(["rejected"]);
    expect(schemaProblems("decide", ok(end))).toEqual([]);
  });
});

describe("a check inside a parallel branch (check.md §3 with parallel.md §3)", () => {
  const screenerA = agent("a_screen");
  const noter = agent("a_notes");

  it("a sibling completing while the evaluator answers changes the material: the core asks again, then the branch joins", () => {
    const sim = Sim.start(PARALLEL_CHECKED, person("mira@example.com"));
    const c1 = sim.claim(screenerA, "screen");
    const c2 = sim.claim(noter, "notes");
    const submit = { type: "submit" as const, claimId: c1, output: { cleared: true }, summary: "Screened." };
    const first = sim.apply(screenerA, submit).needsCheck;
    if (!first) throw new Error("no request");
    expect(first.material.runData.steps).toEqual({});
    // Meanwhile the sibling branch completes: run data changed.
    sim.ok(noter, { type: "submit", claimId: c2, output: { notes: "n" }, summary: "Noted." });
    const stale = sim.apply(screenerA, { ...submit, check: answering({ answer: 0.95 })(first) });
    expect(stale.needsCheck?.key).not.toBe(first.key);
    expect(Object.keys(stale.needsCheck?.material.runData.steps ?? {})).toEqual(["notes"]);
    const { outcome } = sim.checked(screenerA, submit, answering({ answer: 0.95 }));
    expect(outcome.error).toBeNull();
    expect(sim.states()).toEqual({ fork: "done", screen: "done", notes: "done", done: "done" });
    expect(sim.view().run.outcome).toBe("done");
  });

  it("an unsure branch step waits on a person while its sibling goes on; the person's completion joins it", () => {
    // The short form takes the server's thresholds: with checkFail 0.5, 0.6 is unsure (without one it fails).
    const sim = Sim.start(
      PARALLEL_CHECKED,
      person("mira@example.com"),
      {},
      {
        config: { ...CONFIG, check: { ...DEFAULT_CHECK_LIMITS, fail: 0.5 } },
      },
    );
    const c1 = sim.claim(screenerA, "screen");
    sim.checked(
      screenerA,
      { type: "submit", claimId: c1, output: { cleared: true }, summary: "Screened." },
      answering({ answer: 0.6 }),
    );
    expect(sim.states()).toMatchObject({ fork: "waiting", screen: "waiting", notes: "ready" });
    expect(sim.view().run.state).toBe("active");
    sim.work(noter, "notes", { notes: "n" });
    expect(sim.states()).toMatchObject({ fork: "waiting", notes: "done" });
    sim.decide(ops, "screen", "completed");
    expect(sim.states()).toMatchObject({ fork: "done", screen: "done", done: "done" });
    expect(sim.view().data.steps.screen?.check?.verdict).toBe("unsure");
  });
});
