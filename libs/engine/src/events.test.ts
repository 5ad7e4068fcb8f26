import { describe, expect, it } from "vitest";
import { EVENT_REVIEW, WAITS } from "./test-processes.ts";
import { agent, DAY, HOUR, MINUTE, operator, person, published, Sim } from "./test-support.ts";

/**
 * Events (§3.6, tools.md send_event): who may send, holding per run, oldest first by name, one
 * delivery per wait, discarding when the run ends, and `consumedBy`.
 */

const a1 = agent("a_one");
const sender = agent("a_billing");
const reviewer = person("rev@example.com", ["reviewer"]);

const send = (name: string, data?: Record<string, unknown>) =>
  ({ type: "send_event", name, ...(data ? { data } : {}) }) as const;

describe("send_event (§3.6)", () => {
  it("R3-3c: two events before readiness are held; the wait consumes the oldest; a third stays held", () => {
    const sim = Sim.start(EVENT_REVIEW, reviewer);
    const claimId = sim.claim(a1, "prepare");
    expect(sim.ok(sender, send("proof_received", { delivery: 1 }))).toEqual({
      kind: "send_event",
      consumedBy: null,
    });
    sim.advance(MINUTE);
    expect(sim.ok(operator(), send("proof_received", { delivery: 2 }))).toEqual({
      kind: "send_event",
      consumedBy: null,
    });
    sim.advance(MINUTE);
    sim.ok(a1, { type: "submit", claimId, output: {}, summary: "Requested the proof." });
    const view = sim.view();
    // The write returns only after every automatic transition it triggered (§4): proof is done.
    expect(view.data.steps.proof).toEqual({
      output: { delivery: 1 },
      by: "a_billing",
      at: "2026-10-06T09:02:00.000Z",
      history: [],
    });
    expect(sim.states()).toMatchObject({ prepare: "done", proof: "done", review: "waiting" });
    expect(sim.run.heldEvents.map((e) => e.data)).toEqual([{ delivery: 2 }]);
    expect(sim.ok(sender, send("proof_received", { delivery: 3 }))).toEqual({
      kind: "send_event",
      consumedBy: null,
    });
    expect(sim.run.heldEvents.map((e) => e.data)).toEqual([{ delivery: 2 }, { delivery: 3 }]);
    // Held until the run ends, then discarded.
    sim.decide(reviewer, "review", "approved");
    expect(sim.view().run.state).toBe("ended");
    expect(sim.run.heldEvents).toEqual([]);
  });

  it("an event for a waiting wait is consumed at once: consumedBy names the step; data becomes its output", () => {
    const sim = Sim.start(EVENT_REVIEW, reviewer);
    sim.work(a1, "prepare");
    expect(sim.states().proof).toBe("waiting");
    expect(sim.view().run.state).toBe("waiting");
    sim.advance(HOUR);
    expect(sim.ok(operator(), send("proof_received"))).toEqual({ kind: "send_event", consumedBy: "proof" });
    expect(sim.view().data.steps.proof).toMatchObject({ output: {}, by: "olga@example.com" });
    expect(sim.view().workItems.map((w) => w.stepId)).toEqual(["review"]);
  });

  it("names compare exactly; an event with another name is held and never satisfies the wait (#79)", () => {
    const sim = Sim.start(EVENT_REVIEW, reviewer);
    sim.work(a1, "prepare");
    expect(sim.ok(sender, send("proofs_received"))).toEqual({
      kind: "send_event",
      consumedBy: null,
    });
    expect(sim.states().proof).toBe("waiting");
    expect(sim.refused(sender, send("Proof_Received"))).toMatchObject({ code: "invalid" });
    expect(sim.refused(sender, send("proof received")).issues).toEqual([
      'name: "proof received" does not match ^[a-z][a-z0-9_-]{0,63}$',
    ]);
  });

  it("only agents and operators send events; other people are forbidden (#84)", () => {
    const sim = Sim.start(EVENT_REVIEW, reviewer);
    expect(sim.refused(reviewer, send("proof_received"))).toMatchObject({
      code: "forbidden",
      changed: false,
    });
    expect(sim.run.heldEvents).toEqual([]);
  });

  it("each delivery satisfies one wait: a rework re-enters the wait, which consumes the next held event (#80)", () => {
    const sim = Sim.start(WAITS, reviewer, {
      startAt: "2026-10-06T08:00:00Z",
    });
    sim.ok(sender, send("proof_received", { n: 1 }));
    sim.ok(sender, send("proof_received", { n: 2 }));
    sim.work(a1, "prepare");
    sim.advance(HOUR).tick(); // the 1h wait passes; wait_until is already past; proof consumes n: 1
    expect(sim.states()).toMatchObject({
      cool_off: "done",
      start_time: "done",
      proof: "done",
      review: "waiting",
    });
    expect(sim.view().data.steps.proof?.output).toEqual({ n: 1 });
    sim.decide(reviewer, "review", "rejected", { note: "Wrong proof." });
    sim.work(a1, "prepare");
    sim.advance(HOUR).tick();
    expect(sim.view().data.steps.proof).toMatchObject({ output: { n: 2 }, history: [{ output: { n: 1 } }] });
    expect(sim.run.heldEvents).toEqual([]);
  });

  it("a wait_for that times out continues at on_timeout, recording by: server (§2.2)", () => {
    const sim = Sim.start(WAITS, reviewer, {});
    sim.work(a1, "prepare");
    sim.advance(HOUR);
    // No startAt: the wait_until fails the run (§2.2: a missing value fails the run).
    expect(sim.view().run).toMatchObject({ state: "ended", outcome: "failed", ended: { by: "server" } });
    expect(sim.states().start_time).toBe("failed");

    const timed = Sim.start(WAITS, reviewer, { startAt: "2026-10-06T11:00:00+02:00" });
    timed.work(a1, "prepare");
    timed.advance(HOUR);
    expect(timed.states()).toMatchObject({ cool_off: "done", start_time: "done", proof: "waiting" });
    timed.advance(3 * DAY);
    expect(timed.states()).toMatchObject({ proof: "done", chase: "waiting", review: null });
    expect(timed.view().data.steps.proof).toEqual({
      by: "server",
      at: "2026-10-09T10:00:00.000Z",
      history: [],
    });
    // An event after the timeout is held; the run is waiting on chase.
    expect(timed.ok(sender, send("proof_received"))).toEqual({ kind: "send_event", consumedBy: null });
  });

  it("a process whose wait_for is the only waiting step of that name consumes in the order it was reached", () => {
    const def = published("two-waits", [
      "steps:",
      "  - id: first",
      "    wait_for: ping",
      "  - id: second",
      "    wait_for: ping",
      "  - id: done",
      "    finish: ok",
    ]);
    const sim = Sim.start(def, a1);
    expect(sim.ok(sender, send("ping", { n: 1 }))).toEqual({ kind: "send_event", consumedBy: "first" });
    expect(sim.ok(sender, send("ping", { n: 2 }))).toEqual({ kind: "send_event", consumedBy: "second" });
    expect(sim.view().run).toMatchObject({ state: "ended", outcome: "ok" });
  });
});
