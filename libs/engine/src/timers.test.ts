import { describe, expect, it } from "vitest";
import { apply, startRun } from "./machine.ts";
import { DRAFTING, SUPPLIER, WAITS } from "./test-processes.ts";
import { agent, CONFIG, DAY, HOUR, MINUTE, operator, person, published, Sim, T0 } from "./test-support.ts";
import { pendingTimers } from "./timers.ts";

/**
 * Timers derived from run state (§2.2 `due` and waits, §3.3 leases): what is pending, and what
 * firing each one does, at its own time whatever time the shell applies it.
 */

const a1 = agent("a_one");
const editor = person("ed@example.com", ["editor"]);
const kindOf = (sim: Sim) => (id: string) => sim.def.process.steps.find((s) => s.id === id)?.kind;

describe("timers", () => {
  it("a lease ends at its expiry: the step is ready again, readySince unchanged, updatedAt the expiry time", () => {
    const sim = Sim.start(DRAFTING, editor);
    sim.advance(MINUTE);
    sim.claim(a1, "draft");
    expect(pendingTimers(sim.run, kindOf(sim))).toEqual([
      { kind: "lease", stepId: "draft", at: T0 + MINUTE + CONFIG.leaseMs },
      { kind: "due", stepId: "draft", at: T0 + 4 * HOUR },
    ]);
    sim.advance(HOUR).tick(); // applied late, as a slow scheduler would
    expect(sim.run.steps.draft).toMatchObject({ state: "ready", claim: null, readySince: T0 });
    expect(sim.view().run.updatedAt).toBe(new Date(T0 + MINUTE + CONFIG.leaseMs).toISOString());
  });

  it("due marks the open step overdue at its time and notifies once; the work stays open (§2.2, #75)", () => {
    const sim = Sim.start(DRAFTING, editor);
    sim.advance(4 * HOUR - 1);
    expect(sim.view().steps[0]).toMatchObject({ state: "ready", overdue: false });
    sim.advance(1).tick();
    expect(sim.view().steps[0]).toMatchObject({
      state: "ready",
      overdue: true,
      due: "2026-10-06T13:00:00.000Z",
    });
    expect(sim.events.filter((e) => e.type === "step.overdue")).toHaveLength(1);
    // The notice names whom to notify: nobody holds the agent step yet; the operators always.
    expect(sim.events.find((e) => e.type === "step.overdue")?.detail).toEqual({
      due: "2026-10-06T13:00:00.000Z",
      assignedTo: null,
      claimedBy: null,
      notify: "assignee-and-operators",
    });
    sim.advance(DAY).tick();
    expect(sim.events.filter((e) => e.type === "step.overdue")).toHaveLength(1);
    expect(pendingTimers(sim.run, kindOf(sim))).toEqual([]);
    sim.work(a1, "draft", { revision: "late" });
    expect(sim.states().draft).toBe("done");
  });

  it("a repeat of the step through on_reject restarts due; the overdue notice is due again (§2.2, R2-8.3)", () => {
    const sim = Sim.start(DRAFTING, editor);
    sim.advance(5 * HOUR).tick();
    sim.work(a1, "draft", { revision: "r1" });
    sim.decide(editor, "editor_review", "rejected", { note: "Again." });
    expect(sim.run.steps.draft).toMatchObject({ dueAt: sim.now + 4 * HOUR, overdueNotified: false });
    expect(sim.view().steps[0]).toMatchObject({ overdue: false });
  });

  it("an approval's due runs from when it became waiting, and shows on its work item", () => {
    const sim = Sim.start(SUPPLIER, person("m@example.com"), { vendorName: "A", amount: 1 });
    sim.files.set("f", { status: "ok", sha256: "x" });
    sim.advance(HOUR);
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
    expect(sim.view().workItems[0]?.due).toBe(new Date(T0 + HOUR + 2 * DAY).toISOString());
  });

  it("waits complete by the server at their own time; a past wait_until continues at once (§2.2, #76)", () => {
    const sim = Sim.start(WAITS, editor, { startAt: "2026-10-06T12:00:00Z" });
    sim.work(a1, "prepare");
    expect(pendingTimers(sim.run, kindOf(sim))).toEqual([
      { kind: "wait", stepId: "cool_off", at: T0 + HOUR },
    ]);
    sim.advance(10 * HOUR).tick();
    const steps = sim.view().data.steps;
    expect(steps.cool_off).toEqual({ by: "server", at: "2026-10-06T10:00:00.000Z", history: [] });
    expect(steps.start_time).toEqual({ by: "server", at: "2026-10-06T12:00:00.000Z", history: [] });
    expect(sim.run.steps.proof?.fireAt).toBe(Date.UTC(2026, 9, 6, 12) + 3 * DAY);

    const past = Sim.start(WAITS, editor, { startAt: "2020-01-01T00:00:00Z" });
    past.work(a1, "prepare");
    past.advance(HOUR).tick();
    expect(past.view().data.steps.start_time).toEqual({
      by: "server",
      at: "2026-10-06T10:00:00.000Z",
      history: [],
    });
  });

  it("an ended run has no pending timers", () => {
    const sim = Sim.start(DRAFTING, editor);
    sim.claim(a1, "draft");
    sim.ok(operator(), { type: "cancel", reason: "Stop." });
    expect(pendingTimers(sim.run, kindOf(sim))).toEqual([]);
  });
});

describe("timers a write creates already due (§4)", () => {
  it("a wait of 0m completes within the write that reaches it, and due 0m is marked at once", () => {
    const def = published("zero", [
      "steps:",
      "  - id: pause",
      "    wait: 0m",
      "  - id: work",
      "    agent: Work.",
      "    due: 0m",
      "  - id: done",
      "    finish: done",
    ]);
    const started = startRun(
      { runId: "r_zero", inputs: {}, mode: "live" },
      { actor: agent("a_zero"), now: T0, def, config: CONFIG },
    );
    if (!("run" in started)) throw new Error("refused");
    expect(started.run.steps.pause?.state).toBe("done");
    expect(started.run.steps.work?.state).toBe("ready");
    expect(started.run.steps.work?.overdueNotified).toBe(true);
    expect(started.events.map((e) => e.type)).toContain("step.overdue");
  });
});

describe("the timers a transition applied are reported for the journal (issue #5)", () => {
  it("one tick that crosses a cascade of waits reports each timer once, at its own time", () => {
    const def = published("cascade", [
      "steps:",
      "  - id: first",
      "    wait: 1d",
      "  - id: second",
      "    wait: 2d",
      "  - id: work",
      "    agent: Work.",
      "  - id: done",
      "    finish: done",
    ]);
    const started = startRun(
      { runId: "r_cascade", inputs: {}, mode: "live" },
      { actor: agent("a_c"), now: T0, def, config: CONFIG },
    );
    if (!("run" in started)) throw new Error("refused");
    expect(started.fired).toEqual([]);
    const outcome = apply(
      started.run,
      { type: "tick" },
      { actor: { kind: "server" }, now: T0 + 4 * DAY, def, config: CONFIG },
    );
    expect(outcome.fired).toEqual([
      { kind: "wait", stepId: "first", at: T0 + DAY },
      { kind: "wait", stepId: "second", at: T0 + 3 * DAY },
    ]);
    // Applied once: a second tick fires nothing.
    const again = apply(
      outcome.run,
      { type: "tick" },
      { actor: { kind: "server" }, now: T0 + 5 * DAY, def, config: CONFIG },
    );
    expect(again.fired).toEqual([]);
    expect(again.changed).toBe(false);
  });
});
