import { describe, expect, it } from "vitest";
import { CONTRACT, ONBOARDING, SUPPLIER, SUPPORT } from "./test-processes.ts";
import { agent, HOUR, MINUTE, operator, person, published, Sim, T0 } from "./test-support.ts";

/**
 * Run data and states (§3.1, §3.2, §3.5): what each completion records, `history`, rework through
 * `on_reject`, the `failed` decision, and the clean-up when a run ends.
 */

const screener = agent("a_screener");
const finance = person("fin@example.com", ["finance-approver"]);
const manager = "manager@example.com";
const hiring = person(manager);
const hr = person("hr@example.com", ["hr-operations"]);
const it_ = person("it@example.com", ["it-operations"]);
const FILE = { kind: "file" as const, ref: "f_report" };

function supplier(): Sim {
  const sim = Sim.start(SUPPLIER, person("mira@example.com"), { vendorName: "Acme", amount: 48000 });
  sim.files.set("f_report", { status: "ok", sha256: "4f1c" });
  return sim;
}

function cleared(sim: Sim): void {
  sim.work(
    screener,
    "check_vendor",
    { cleared: true, summary: "No matches." },
    { evidence: [FILE], next: "approve", reason: "Vendor is cleared." },
  );
}

describe("start (§3.2, §3.5, §6 rule 1)", () => {
  it("makes the first step ready, the run active, every other step null, with no run data yet", () => {
    const sim = supplier();
    const view = sim.view();
    expect(view.run).toEqual({
      id: "r_test",
      process: "supplier-onboarding",
      version: 1,
      mode: "live",
      state: "active",
      outcome: null,
      ended: null,
      startedBy: "mira@example.com",
      startedAt: "2026-10-06T09:00:00.000Z",
      updatedAt: "2026-10-06T09:00:00.000Z",
    });
    expect(view.steps).toEqual([
      { id: "check_vendor", kind: "agent", state: "ready" },
      { id: "approve", kind: "approve", state: null },
      { id: "decline", kind: "finish", state: null },
      { id: "done", kind: "finish", state: null },
    ]);
    expect(view.data).toEqual({ inputs: { vendorName: "Acme", amount: 48000 }, steps: {} });
    expect(view.workItems).toEqual([]);
    expect(view.body).toBe(SUPPLIER.process.body);
  });
});

describe("R1-0 the specification's example (§2, §3.1, §3.2)", () => {
  it("approve → ended onboarded; every completion records by/at; a finish records nothing", () => {
    const sim = supplier();
    sim.advance(HOUR);
    cleared(sim);
    const afterSubmit = sim.view();
    expect(afterSubmit.run.state).toBe("waiting");
    expect(afterSubmit.data.steps.check_vendor).toEqual({
      output: { cleared: true, summary: "No matches." },
      evidence: [{ kind: "file", ref: "f_report", sha256: "4f1c" }],
      summary: "Did check_vendor.",
      next: "approve",
      reason: "Vendor is cleared.",
      by: "a_screener",
      at: "2026-10-06T10:00:00.000Z",
      history: [],
    });
    expect(afterSubmit.steps[1]).toEqual({
      id: "approve",
      kind: "approve",
      state: "waiting",
      due: "2026-10-08T10:00:00.000Z",
      overdue: false,
    });
    sim.advance(HOUR);
    expect(sim.decide(finance, "approve", "approved").error).toBeNull();
    const view = sim.view();
    expect(view.run).toMatchObject({
      state: "ended",
      outcome: "onboarded",
      ended: { by: "server", at: "2026-10-06T11:00:00.000Z", note: null },
      updatedAt: "2026-10-06T11:00:00.000Z",
    });
    // §3.1 / tools.md: an approval has decision, note, by, at, history and nothing else (no note given).
    expect(view.data.steps.approve).toEqual({
      decision: "approved",
      by: "fin@example.com",
      at: "2026-10-06T11:00:00.000Z",
      history: [],
    });
    expect(view.data.steps.done).toBeUndefined();
    expect(sim.states()).toEqual({ check_vendor: "done", approve: "done", decline: null, done: "done" });
    expect(view.workItems).toEqual([]);
  });

  it("the agent's decline route ends the run declined", () => {
    const sim = supplier();
    sim.work(
      screener,
      "check_vendor",
      { cleared: false, summary: "OFAC hit." },
      { evidence: [FILE], next: "decline", reason: "Sanctions hit on OFAC." },
    );
    expect(sim.view().run).toMatchObject({ state: "ended", outcome: "declined" });
    expect(sim.states()).toEqual({ check_vendor: "done", approve: null, decline: "done", done: null });
  });

  it("an approved decision may carry a note, recorded with the decision (tools.md decide table)", () => {
    const sim = supplier();
    cleared(sim);
    sim.decide(finance, "approve", "approved", { note: "Fine." });
    expect(sim.view().data.steps.approve).toMatchObject({ decision: "approved", note: "Fine." });
  });
});

describe("rework through on_reject (§3.1)", () => {
  it("R1-0 reject: check_vendor is ready again; the approval keeps its rejection current and is null", () => {
    const sim = supplier();
    cleared(sim);
    const before = sim.run.snapshot;
    sim.advance(HOUR);
    sim.decide(finance, "approve", "rejected", { note: "Spend not justified." });
    const view = sim.view();
    expect(view.run.state).toBe("active");
    expect(sim.states()).toEqual({ check_vendor: "ready", approve: null, decline: null, done: null });
    expect(view.data.steps.approve).toEqual({
      decision: "rejected",
      note: "Spend not justified.",
      by: "fin@example.com",
      at: "2026-10-06T10:00:00.000Z",
      history: [],
    });
    // Checklist #33: the returned-to step's own completion stays current until it completes again.
    expect(view.data.steps.check_vendor?.output).toEqual({ cleared: true, summary: "No matches." });
    expect(view.data.steps.check_vendor?.history).toEqual([]);
    expect(sim.run.snapshot).not.toBe(before);

    sim.advance(HOUR);
    sim.work(
      screener,
      "check_vendor",
      { cleared: true, summary: "Justified now." },
      { evidence: [FILE], next: "approve", reason: "Cleared." },
    );
    const again = sim.view().data.steps.check_vendor;
    expect(again?.output).toEqual({ cleared: true, summary: "Justified now." });
    expect(again?.history.map((h) => h.output)).toEqual([{ cleared: true, summary: "No matches." }]);
    // The approval is waiting again with a new item, and still shows its rejection until decided.
    expect(sim.states().approve).toBe("waiting");
    expect(sim.view().data.steps.approve?.decision).toBe("rejected");
    sim.decide(finance, "approve", "approved");
    const approve = sim.view().data.steps.approve;
    expect(approve).toMatchObject({ decision: "approved", history: [{ decision: "rejected" }] });
    expect(sim.view().run.outcome).toBe("onboarded");
  });

  it("R1-2: a rejection moves exactly the steps completed after the returned-to step to history", () => {
    const sim = Sim.start(ONBOARDING, hr, { employeeId: "E-1", hiringManager: manager });
    sim.decide(hr, "hr_setup", "completed", {
      output: { hrisRecord: "HR-1" },
      evidence: [{ kind: "link", ref: "https://hris/1" }],
    });
    sim.decide(hiring, "access_plan", "completed", {
      output: { accessRequests: ["crm"], buddy: "bo@example.com" },
    });
    sim.decide(it_, "it_setup", "completed", {
      output: { assetTag: "LT-9" },
      evidence: [{ kind: "link", ref: "https://it/9" }],
    });
    sim.work(agent("a_welcome"), "welcome", { checklist: "CL-1" });
    expect(sim.states().confirm_ready).toBe("waiting");
    sim.decide(hiring, "confirm_ready", "rejected", { note: "No buddy meeting yet." });

    const view = sim.view();
    expect(sim.states()).toEqual({
      hr_setup: "done",
      access_plan: "waiting",
      it_setup: null,
      welcome: null,
      confirm_ready: null,
      done: null,
    });
    const steps = view.data.steps;
    // Before the returned-to step: untouched.
    expect(steps.hr_setup).toMatchObject({ output: { hrisRecord: "HR-1" }, history: [] });
    // The returned-to step: its completion stays current until it completes again (#33).
    expect(steps.access_plan).toMatchObject({ output: { buddy: "bo@example.com" }, history: [] });
    // Completed after it: current fields moved to history, no current value.
    expect(steps.it_setup).toEqual({ history: [expect.objectContaining({ output: { assetTag: "LT-9" } })] });
    expect(steps.welcome).toEqual({ history: [expect.objectContaining({ output: { checklist: "CL-1" } })] });
    // The rejecting approval keeps decision, note, by and at current.
    expect(steps.confirm_ready).toMatchObject({ decision: "rejected", note: "No buddy meeting yet." });
    expect(view.workItems.map((w) => w.stepId)).toEqual(["access_plan"]);
  });

  it("R2-4: finance rejects → legal moves to history; finance keeps its note; the second pass records both again", () => {
    const owner = person("owner@example.com");
    const legal = person("lee@example.com", ["legal-reviewer"]);
    const fin = person("fay@example.com", ["finance-reviewer"]);
    const sim = Sim.start(CONTRACT, agent("a_starter"), { contractId: "C-1", owner: "owner@example.com" });
    sim.files.set("f_c1", { status: "ok", sha256: "aa" });
    const prepare = () =>
      sim.decide(owner, "prepare", "completed", {
        output: { revision: "r1", summary: "Net 30." },
        evidence: [{ kind: "file", ref: "f_c1" }],
      });
    prepare();
    sim.decide(legal, "legal_review", "approved");
    sim.decide(fin, "finance_review", "rejected", { note: "Change payment terms to net 60." });
    expect(sim.states()).toMatchObject({
      prepare: "waiting",
      legal_review: null,
      finance_review: null,
      sign: null,
    });
    const steps = sim.view().data.steps;
    expect(steps.legal_review).toEqual({ history: [expect.objectContaining({ decision: "approved" })] });
    expect(steps.finance_review).toMatchObject({
      decision: "rejected",
      note: "Change payment terms to net 60.",
    });
    prepare();
    sim.decide(legal, "legal_review", "approved");
    sim.decide(fin, "finance_review", "approved");
    const after = sim.view().data.steps;
    expect(after.legal_review?.history).toHaveLength(1);
    expect(after.finance_review).toMatchObject({
      decision: "approved",
      history: [{ decision: "rejected", note: "Change payment terms to net 60." }],
    });
    expect(after.prepare?.history).toHaveLength(1);
  });

  it("a rejection into a step this run never reached rewinds nothing (support-escalation: diagnose → confirm → tier1_handoff)", () => {
    const lead = person("tia@example.com", ["tier1-lead"]);
    const sim = Sim.start(SUPPORT, agent("a_support"), { ticketId: "T-1" });
    sim.work(agent("a_diag"), "diagnose", { diagnosis: "Cache." }, { next: "confirm", reason: "Fixed it." });
    sim.decide(lead, "confirm", "rejected", { note: "Customer still sees it." });
    expect(sim.states()).toMatchObject({
      diagnose: "done",
      tier1_handoff: "waiting",
      engineering: null,
      confirm: null,
    });
    expect(sim.view().data.steps.diagnose).toMatchObject({ output: { diagnosis: "Cache." }, history: [] });
  });

  it("a rejection into a step rewound earlier still rewinds what completed downstream of it since (§3.1; review finding)", () => {
    const reviewer = person("rae@example.com", ["reviewer"]);
    const sim = Sim.start(
      published("rewind2", [
        "steps:",
        "  - id: s1",
        "    agent: First.",
        "    next: [s2, r1]",
        "  - id: s2",
        "    agent: Second.",
        "  - id: r1",
        "    person: reviewer",
        "    approve: First review.",
        "    on_reject: s1",
        "  - id: r2",
        "    person: reviewer",
        "    approve: Second review.",
        "    on_reject: s2",
        "  - id: done",
        "    finish: ok",
      ]),
      reviewer,
    );
    const a = agent("a_rw");
    sim.work(a, "s1", {}, { next: "s2", reason: "Needs s2." });
    sim.work(a, "s2", {});
    sim.decide(reviewer, "r1", "rejected", { note: "Redo s1." });
    expect(sim.states()).toMatchObject({ s1: "ready", s2: null, r1: null });
    sim.work(a, "s1", {}, { next: "r1", reason: "Skip s2 now." });
    sim.decide(reviewer, "r1", "approved");
    sim.decide(reviewer, "r2", "rejected", { note: "Do s2 after all." });
    // r1 was approved after s2's last completion and lies downstream of s2: it is rewound. s1 lies
    // upstream of s2: its current completion stays.
    expect(sim.states()).toMatchObject({ s1: "done", s2: "ready", r1: null, r2: null });
    const data = sim.view().data.steps;
    expect(data.r1).toEqual({
      history: [
        expect.objectContaining({ decision: "rejected" }),
        expect.objectContaining({ decision: "approved" }),
      ],
    });
    expect(data.s1).toMatchObject({ next: "r1", history: [expect.objectContaining({ next: "s2" })] });
    expect(data.r2).toMatchObject({ decision: "rejected", note: "Do s2 after all." });
  });

  it("repeated rework keeps every earlier completion in history, oldest first (R1-8, #31)", () => {
    const editor = person("ed@example.com", ["editor"]);
    const sim = Sim.start(
      published("repeat", [
        "steps:",
        "  - id: draft",
        "    agent: Draft.",
        "    output: { n: number }",
        "  - id: review",
        "    person: editor",
        "    approve: Review.",
        "    on_reject: draft",
        "  - id: done",
        "    finish: ok",
      ]),
      editor,
    );
    for (let n = 1; n <= 3; n++) {
      sim.work(agent("a_writer"), "draft", { n });
      if (n < 3) sim.decide(editor, "review", "rejected", { note: `Round ${n}.` });
    }
    sim.decide(editor, "review", "approved");
    const steps = sim.view().data.steps;
    expect(steps.draft?.output).toEqual({ n: 3 });
    expect(steps.draft?.history.map((h) => h.output)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(steps.review?.history.map((h) => h.note)).toEqual(["Round 1.", "Round 2."]);
    expect(steps.review?.decision).toBe("approved");
  });

  it("without on_reject a rejection ends the run rejected with the note in run.ended (§3.5, R2-1.6)", () => {
    const def = published("no-reject", [
      "steps:",
      "  - id: review",
      "    person: cfo",
      "    approve: Approve.",
      "  - id: record",
      "    agent: Record it.",
      "  - id: done",
      "    finish: approved",
    ]);
    const cfo = person("cfo@example.com", ["cfo"]);
    const run = Sim.start(def, cfo);
    run.advance(HOUR);
    run.decide(cfo, "review", "rejected", { note: "Over budget." });
    const view = run.view();
    expect(view.run).toMatchObject({
      state: "ended",
      outcome: "rejected",
      ended: { by: "cfo@example.com", at: "2026-10-06T10:00:00.000Z", note: "Over budget." },
    });
    expect(view.data.steps.review).toMatchObject({ decision: "rejected", note: "Over budget." });
    expect(run.states()).toEqual({ review: "done", record: null, done: null });
  });
});

describe("the failed decision and terminal clean-up (§3.4, §3.5; R2-2.4, R2-extra b)", () => {
  it("failed leaves the step failed with its record, ends the run failed, removes work items, ends tokens", () => {
    const sim = Sim.start(ONBOARDING, hr, { employeeId: "E-1", hiringManager: manager });
    sim.advance(HOUR);
    const item = sim.item("hr_setup");
    sim.decide(hr, "hr_setup", "failed", { note: "Offer withdrawn." });
    const view = sim.view();
    expect(view.run).toMatchObject({
      state: "ended",
      outcome: "failed",
      ended: { by: "hr@example.com", at: "2026-10-06T10:00:00.000Z", note: "Offer withdrawn." },
    });
    expect(view.data.steps.hr_setup).toEqual({
      decision: "failed",
      note: "Offer withdrawn.",
      by: "hr@example.com",
      at: "2026-10-06T10:00:00.000Z",
      history: [],
    });
    expect(sim.states().hr_setup).toBe("failed");
    expect(view.workItems).toEqual([]);
    // A late decision on the removed item: run_ended, checked first.
    const late = sim.refused(hr, {
      type: "decide",
      workItemId: item.id,
      snapshot: sim.run.snapshot,
      decision: "completed",
      output: { hrisRecord: "x" },
    });
    expect(late).toMatchObject({ code: "conflict", issues: ["run_ended"], changed: false });
  });

  it("failed on an escalated agent step cancels nothing done, leaves the step failed (R3-1c.3 in core)", () => {
    const sim = supplier();
    const claimId = sim.claim(screener, "check_vendor");
    sim.ok(screener, { type: "escalate", claimId, note: "Lists unreachable." });
    sim.decide(operator(), "check_vendor", "failed", { note: "Screening service down for a week." });
    expect(sim.states()).toEqual({ check_vendor: "failed", approve: null, decline: null, done: null });
    expect(sim.view().data.steps.check_vendor).toMatchObject({ decision: "failed", by: "olga@example.com" });
  });

  it("cancel: every unfinished step cancelled, items removed, tokens dead, reason in run.ended (R3-3d)", () => {
    const sim = Sim.start(SUPPORT, agent("a_support"), { ticketId: "T-1" });
    const claimId = sim.claim(agent("a_diag"), "diagnose");
    sim.advance(HOUR);
    const ops = operator();
    expect(sim.ok(ops, { type: "cancel", reason: "Customer withdrew." })).toEqual({ kind: "view" });
    const view = sim.view();
    expect(view.run).toMatchObject({
      state: "cancelled",
      outcome: null,
      ended: { by: "olga@example.com", at: "2026-10-06T10:00:00.000Z", note: "Customer withdrew." },
    });
    expect(sim.states().diagnose).toBe("cancelled");
    expect(sim.states().confirm).toBeNull();
    expect(view.workItems).toEqual([]);
    const late = sim.refused(agent("a_diag"), {
      type: "submit",
      claimId,
      output: { diagnosis: "x" },
      summary: "x",
      next: "confirm",
      reason: "x",
    });
    expect(late).toMatchObject({ code: "conflict", issues: ["run_ended"] });
    expect(sim.refused(ops, { type: "cancel", reason: "Again." })).toMatchObject({
      code: "conflict",
      issues: ["run_ended"],
    });
  });

  it("cancel with an open work item and a held event removes both (§3.5, §3.6)", () => {
    const sim = supplier();
    cleared(sim);
    sim.ok(agent("a_any"), { type: "send_event", name: "unused", data: { x: 1 } });
    expect(sim.run.heldEvents).toHaveLength(1);
    sim.ok(operator(), { type: "cancel", reason: "Stop." });
    expect(sim.states()).toMatchObject({ check_vendor: "done", approve: "cancelled" });
    expect(sim.run.workItems).toEqual([]);
    expect(sim.run.heldEvents).toEqual([]);
  });

  it("an ended run refuses every write with run_ended before anything else (§3.5)", () => {
    const sim = supplier();
    const claimId = sim.claim(screener, "check_vendor");
    sim.ok(operator(), { type: "cancel", reason: "Stop." });
    const ended = [
      sim.refused(person("x@example.com"), { type: "claim", stepId: "nope" }),
      sim.refused(agent("other"), { type: "renew", claimId: "c999" }),
      sim.refused(person("x@example.com"), { type: "escalate", claimId, note: "" }),
      sim.refused(agent("a"), {
        type: "decide",
        workItemId: "w_404",
        snapshot: "old",
        decision: "approved",
      }),
      sim.refused(person("nobody@example.com"), { type: "send_event", name: "BAD NAME" }),
      sim.refused(agent("a"), { type: "cancel", reason: "x" }),
    ];
    for (const r of ended) expect(r).toEqual({ code: "conflict", issues: ["run_ended"], changed: false });
  });
});

describe("run states (§3.5)", () => {
  it("active while an agent step is ready or claimed; waiting when only people, timers, events or escalations are pending", () => {
    const sim = supplier();
    expect(sim.view().run.state).toBe("active");
    const claimId = sim.claim(screener, "check_vendor");
    expect(sim.view().run.state).toBe("active");
    expect(sim.states().check_vendor).toBe("claimed");
    sim.ok(screener, { type: "escalate", claimId, note: "Stuck." });
    expect(sim.view().run.state).toBe("waiting");
    expect(sim.states().check_vendor).toBe("waiting");
    sim.decide(operator(), "check_vendor", "returned", { note: "Try the EU list again." });
    expect(sim.view().run.state).toBe("active");
    expect(sim.states().check_vendor).toBe("ready");
  });

  it("updatedAt moves with accepted writes, not with refusals (tools.md submit: nothing changed)", () => {
    const sim = supplier();
    const claimId = sim.claim(screener, "check_vendor");
    const claimedAt = sim.view().run.updatedAt;
    sim.advance(MINUTE);
    const refused = sim.refused(screener, { type: "submit", claimId, output: {}, summary: "Nothing." });
    expect(refused.code).toBe("not_accepted");
    expect(refused.changed).toBe(true); // handoff.issues recorded for a later attempt
    expect(sim.view().run.updatedAt).toBe(claimedAt);
    expect(sim.now).toBe(T0 + MINUTE);
  });
});
