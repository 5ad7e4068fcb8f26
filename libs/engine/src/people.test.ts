import { describe, expect, it } from "vitest";
import { mayDecide, startRun } from "./machine.ts";
import {
  CONTRACT,
  DRAFTING,
  EXPENSE,
  LATER_INITIATOR,
  ONBOARDING,
  PATHS,
  SUPPLIER,
} from "./test-processes.ts";
import { agent, CONFIG, HOUR, MINUTE, operator, person, Sim, T0 } from "./test-support.ts";
import { workItemView } from "./view.ts";

/**
 * People (§3.4): work items, role → group, `initiator`, `person` paths, the snapshot, the first
 * decision winning, escalations and their three decisions.
 */

const a1 = agent("a_one");

describe("work items (§3.4, tools.md shared shapes)", () => {
  it("a person step opens one work item with its requirements exactly as claim.step gives them", () => {
    const owner = person("owner@example.com");
    const sim = Sim.start(CONTRACT, a1, { contractId: "C-1", owner: "Owner@Example.com" });
    const view = sim.view();
    expect(view.run.state).toBe("waiting");
    expect(view.workItems).toEqual([
      {
        id: expect.any(String),
        stepId: "prepare",
        kind: "task",
        text: "Prepare an immutable revision.",
        output: { revision: "string", summary: "string" },
        evidence: ["file"],
        next: null,
        handoff: null,
        assignedTo: { person: "Owner@Example.com" },
        snapshot: sim.run.snapshot,
        due: null,
        escalation: null,
        decide: {
          tool: "decide",
          arguments: {
            runId: "r_test",
            workItemId: view.workItems[0]?.id,
            snapshot: sim.run.snapshot,
            requestId: "<new UUID>",
          },
          decisions: ["completed", "failed"],
        },
      },
    ]);
    // A person value compares without regard to case (describe.person.format: email).
    const item = sim.item("prepare");
    expect(mayDecide(owner, item, "operators")).toBe(true);
    expect(mayDecide(person("other@example.com"), item, "operators")).toBe(false);
  });

  it("an approval item takes no output, evidence or next and accepts approved, rejected, failed", () => {
    const sim = Sim.start(SUPPLIER, person("m@example.com"), { vendorName: "A", amount: 1 });
    sim.files.set("f", { status: "ok", sha256: "x" });
    sim.work(
      a1,
      "check_vendor",
      { cleared: true, summary: "ok" },
      {
        evidence: [{ kind: "file", ref: "f" }],
        next: "approve",
        reason: "ok",
      },
    );
    const [item] = sim.view().workItems;
    expect(item).toMatchObject({
      kind: "approve",
      output: null,
      evidence: null,
      next: null,
      assignedTo: { group: "finance-approver" },
      due: "2026-10-08T09:00:00.000Z",
    });
    expect(item?.decide.decisions).toEqual(["approved", "rejected", "failed"]);
  });

  it("a role maps to the group it was bound to at publication; any member may decide, others may not", () => {
    const def = { ...SUPPLIER, bindings: { "finance-approver": "g_finance" } };
    const sim = Sim.start(def, person("m@example.com"), { vendorName: "A", amount: 1 });
    sim.files.set("f", { status: "ok", sha256: "x" });
    sim.work(
      a1,
      "check_vendor",
      { cleared: true, summary: "ok" },
      {
        evidence: [{ kind: "file", ref: "f" }],
        next: "approve",
        reason: "ok",
      },
    );
    const item = sim.item("approve");
    expect(item.assignedTo).toEqual({ group: "g_finance" });
    expect(mayDecide(person("x@example.com", ["finance-approver"]), item, "operators")).toBe(false);
    expect(mayDecide(person("y@example.com", ["g_finance"]), item, "operators")).toBe(true);
    expect(mayDecide(agent("g_finance"), item, "operators")).toBe(false);
  });

  it("the first decision wins; a second member gets already_decided, never stale (§3.4, #57)", () => {
    const sim = Sim.start(ONBOARDING, person("hr@example.com", ["hr-operations"]), {
      employeeId: "E",
      hiringManager: "m@example.com",
    });
    const item = sim.item("hr_setup");
    const snapshot = sim.run.snapshot;
    const members = ["a", "b", "c"].map((n) => person(`${n}@example.com`, ["hr-operations"]));
    const answers = members.map((who, i) =>
      sim.apply(who, {
        type: "decide",
        workItemId: item.id,
        snapshot,
        decision: "completed",
        output: { hrisRecord: `HR-${i}` },
        evidence: [{ kind: "link", ref: "https://hris" }],
      }),
    );
    expect(answers.map((a) => a.error?.issues ?? "ok")).toEqual([
      "ok",
      ["already_decided"],
      ["already_decided"],
    ]);
    expect(sim.view().data.steps.hr_setup).toMatchObject({
      output: { hrisRecord: "HR-0" },
      by: "a@example.com",
    });
  });
});

describe("initiator (§3.4, tools.md start_run; R1-5, R2-extra a, R3-3e)", () => {
  it("assigns to the person who started the run", () => {
    const sam = person("sam@example.com");
    const sim = Sim.start(EXPENSE, sam, { claimId: "X-1", manager: "mia@example.com" });
    expect(sim.view().workItems[0]?.assignedTo).toEqual({ person: "sam@example.com" });
    expect(sim.run.initiator).toBe("sam@example.com");
  });

  it("an agent starting a process with an initiator step, first or later, is refused invalid; nothing is created", () => {
    for (const def of [EXPENSE, LATER_INITIATOR]) {
      const inputs = def === EXPENSE ? { claimId: "X-1", manager: "mia@example.com" } : {};
      const outcome = startRun(
        { runId: "r_x", inputs, mode: "live" },
        { actor: a1, now: T0, def, config: CONFIG },
      );
      expect("run" in outcome).toBe(false);
      expect(outcome.error).toMatchObject({ code: "invalid" });
      expect(outcome.error?.issues).toEqual([
        def === EXPENSE
          ? "steps.receipts.person: initiator needs a person to start the run"
          : "steps.sign_off.person: initiator needs a person to start the run",
      ]);
    }
  });

  it("every start issue is reported at once: inputs and the initiator rule", () => {
    const outcome = startRun(
      { runId: "r_x", inputs: { claimId: 7, extra: true }, mode: "live" },
      { actor: a1, now: T0, def: EXPENSE, config: CONFIG },
    );
    expect(outcome.error?.issues).toEqual([
      "inputs.claimId: expected string",
      "inputs.manager: missing",
      "inputs.extra: not declared",
      "steps.receipts.person: initiator needs a person to start the run",
    ]);
  });
});

describe("person paths (§2.2, §3.4, §3.5; #60, #61)", () => {
  it("inputs.<f> and steps.<id>.output.<f> resolve to the person value in run data", () => {
    const sim = Sim.start(PATHS, a1, { reviewer: "rae@example.com" });
    sim.work(a1, "pick", { approver: "abe@example.com" });
    expect(sim.item("first_review").assignedTo).toEqual({ person: "abe@example.com" });
    sim.decide(person("abe@example.com"), "first_review", "approved");
    expect(sim.item("second_review").assignedTo).toEqual({ person: "rae@example.com" });
  });

  it("a path that resolves to nothing fails that step with by: server and a note, ending the run failed", () => {
    const sim = Sim.start(PATHS, a1, {});
    sim.advance(HOUR);
    sim.work(a1, "pick", {});
    const view = sim.view();
    expect(view.run).toMatchObject({
      state: "ended",
      outcome: "failed",
      ended: { by: "server", at: "2026-10-06T10:00:00.000Z" },
    });
    expect(view.run.ended?.note).toContain("steps.pick.output.approver");
    expect(sim.states()).toEqual({ pick: "done", first_review: "failed", second_review: null, done: null });
    expect(view.data.steps.first_review).toEqual({
      decision: "failed",
      note: view.run.ended?.note,
      by: "server",
      at: "2026-10-06T10:00:00.000Z",
      history: [],
    });
    expect(view.workItems).toEqual([]);
  });

  it("an unresolved path on the first step fails the run as it starts", () => {
    const def = { ...PATHS, process: { ...PATHS.process, steps: PATHS.process.steps.slice(2) } };
    const sim = Sim.start(def, a1, {});
    expect(sim.view().run).toMatchObject({ state: "ended", outcome: "failed" });
    expect(sim.states().second_review).toBe("failed");
  });
});

describe("escalation (§3.3, §3.4 table; R2-3)", () => {
  function escalated(): { sim: Sim; claimId: string } {
    const sim = Sim.start(DRAFTING, person("ed@example.com", ["editor"]));
    const claimId = sim.claim(a1, "draft");
    sim.advance(5 * MINUTE);
    sim.ok(a1, { type: "escalate", claimId, note: "The CMS rejects my revision." });
    return { sim, claimId };
  }

  it("returned: the step is ready again with the note in handoff.returned; due and readySince do not restart", () => {
    const { sim } = escalated();
    const dueBefore = sim.run.steps.draft?.dueAt;
    expect(dueBefore).toBe(T0 + 4 * HOUR);
    expect(sim.view().workItems[0]?.due).toBe("2026-10-06T13:00:00.000Z");
    sim.advance(HOUR);
    sim.decide(operator(), "draft", "returned", { note: "Use the staging CMS." });
    expect(sim.states().draft).toBe("ready");
    expect(sim.run.steps.draft?.dueAt).toBe(dueBefore);
    expect(sim.run.steps.draft?.readySince).toBe(T0);
    expect(sim.run.steps.draft?.handoff).toEqual({
      returned: { note: "Use the staging CMS.", by: "olga@example.com", at: "2026-10-06T10:05:00.000Z" },
    });
    expect(sim.view().workItems).toEqual([]);
    expect(sim.view().steps[0]).toMatchObject({
      state: "ready",
      due: "2026-10-06T13:00:00.000Z",
      overdue: false,
    });
    // Overdue stays measured from the first readiness: at 13:00 the step is overdue.
    sim.advance(3 * HOUR);
    expect(sim.view().steps[0]).toMatchObject({ overdue: true });
  });

  it("completed: a person finishes it in the agent's place under the same acceptance (#67)", () => {
    const { sim } = escalated();
    const ops = operator();
    const refused = sim.decide(ops, "draft", "completed", { output: {} });
    expect(refused.error).toMatchObject({ code: "not_accepted", issues: ["output.revision: missing"] });
    expect(sim.view().workItems[0]?.handoff).toEqual({ issues: ["output.revision: missing"] });
    expect(sim.decide(ops, "draft", "completed", { output: { revision: "r7" } }).error).toBeNull();
    expect(sim.view().data.steps.draft).toMatchObject({ output: { revision: "r7" }, by: "olga@example.com" });
    expect(sim.view().data.steps.draft?.summary).toBeUndefined(); // optional from people
    expect(sim.states()).toMatchObject({ draft: "done", editor_review: "waiting" });
  });

  it("failed: the run ends failed with the operator's note", () => {
    const { sim } = escalated();
    sim.decide(operator(), "draft", "failed", { note: "Abandoned." });
    expect(sim.view().run).toMatchObject({ outcome: "failed", ended: { note: "Abandoned." } });
    expect(sim.states().draft).toBe("failed");
  });

  it("the operator queue is decided by its group's members or by anyone with the operator role", () => {
    const { sim } = escalated();
    const item = sim.item("draft");
    expect(item.assignedTo).toEqual({ group: "operators" });
    expect(mayDecide(person("q@example.com", ["operators"]), item, "operators")).toBe(true);
    expect(mayDecide(operator("boss@example.com"), item, "operators")).toBe(true);
    expect(mayDecide(person("ed@example.com", ["editor"]), item, "operators")).toBe(false);
    const view = workItemView(sim.run, sim.def, item, "snap");
    expect(view.escalation).toEqual({
      note: "The CMS rejects my revision.",
      by: "a_one",
      at: "2026-10-06T09:05:00.000Z",
    });
  });
});
