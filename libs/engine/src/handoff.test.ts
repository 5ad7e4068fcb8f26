import { describe, expect, it } from "vitest";
import { DRAFTING } from "./test-processes.ts";
import { agent, CONFIG, MINUTE, operator, person, Sim, T0 } from "./test-support.ts";
import { agentWorkItem, claimResult, indexRows, workItemView } from "./view.ts";

/**
 * Handoff (§3.3): what the previous attempt at a step left behind, on every claim, every get_work
 * item and every work item — `progress` after an expired lease, `returned` after a person sent an
 * escalated step back, `issues` after a refused submission — and `null` on a fresh attempt,
 * including rework through `on_reject`.
 */

const a1 = agent("a_one");
const a2 = agent("a_two");
const editor = person("ed@example.com", ["editor"]);

function draft(): Sim {
  return Sim.start(DRAFTING, editor);
}

/** The handoff as each of the three places shows it: claim, agent get_work item, (escalation) work item. */
function agentItem(sim: Sim) {
  const row = indexRows(sim.run, sim.def).ready.find((r) => r.stepId === "draft");
  return row ? agentWorkItem(row, sim.now) : null;
}

describe("handoff (§3.3)", () => {
  it("is null on a first attempt, on get_work and on claim", () => {
    const sim = draft();
    expect(agentItem(sim)?.handoff).toBeNull();
    const value = sim.ok(a1, { type: "claim", stepId: "draft" });
    if (value.kind !== "claim") throw new Error("no claim");
    expect(claimResult(sim.run, sim.def, value, "tok").handoff).toBeNull();
  });

  it("carries the last renew.progress after a lease expired, to get_work and to the next claim", () => {
    const sim = draft();
    const claimId = sim.claim(a1, "draft");
    sim.advance(MINUTE);
    const renewed = sim.ok(a1, { type: "renew", claimId, progress: "Outline written." });
    if (renewed.kind !== "renew") throw new Error("no renew");
    sim.ok(a1, { type: "renew", claimId: renewed.claimId, progress: "Intro written." });
    // Read before the lease timer is committed: the ready-steps row still holds the claim.
    sim.advance(CONFIG.leaseMs + MINUTE);
    const row = indexRows(sim.run, sim.def).ready.find((r) => r.stepId === "draft");
    expect(row?.progress).toBe("Intro written.");
    expect(row && agentWorkItem(row, sim.now).handoff).toEqual({ progress: "Intro written." });
    // …and after it is committed (any write, here another agent's claim).
    const value = sim.ok(a2, { type: "claim", stepId: "draft" });
    if (value.kind !== "claim") throw new Error("no claim");
    expect(claimResult(sim.run, sim.def, value, "tok").handoff).toEqual({ progress: "Intro written." });
  });

  it("a lease that expires without progress leaves no handoff", () => {
    const sim = draft();
    sim.claim(a1, "draft");
    sim.advance(CONFIG.leaseMs);
    expect(agentItem(sim)?.handoff).toBeNull();
  });

  it("carries the issues of the last refused submission, replaced by later ones", () => {
    const sim = draft();
    const claimId = sim.claim(a1, "draft");
    sim.refused(a1, { type: "submit", claimId, output: {}, summary: "Nothing yet." });
    sim.refused(a1, { type: "submit", claimId, output: { revision: 7 }, summary: "Wrong type." });
    sim.advance(CONFIG.leaseMs);
    expect(agentItem(sim)?.handoff).toEqual({ issues: ["output.revision: expected string"] });
  });

  it("bounds the issues of a refused submission: the first 200 and a count of the rest, in the answer and in handoff.issues alike (§6 rule 3, §3.3)", () => {
    const sim = draft();
    const claimId = sim.claim(a1, "draft");
    const output = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}`, i]));
    const refused = sim.refused(a1, { type: "submit", claimId, output, summary: "Everything but revision." });
    const expected = [
      "output.revision: missing",
      ...Array.from({ length: 199 }, (_, i) => `output.f${i}: not declared`),
      "… and 801 more issues; fix these first",
    ];
    expect(refused).toMatchObject({ code: "not_accepted", issues: expected });
    sim.advance(CONFIG.leaseMs);
    expect(agentItem(sim)?.handoff).toEqual({ issues: expected });
  });

  it("carries returned {note, by, at} after a person sent the escalated step back; several may be present", () => {
    const sim = draft();
    const c1 = sim.claim(a1, "draft");
    sim.refused(a1, { type: "submit", claimId: c1, output: {}, summary: "x" });
    sim.ok(a1, { type: "escalate", claimId: c1, note: "Cannot reach the CMS." });
    const item = sim.item("draft");
    expect(workItemView(sim.run, sim.def, item, "s").handoff).toEqual({
      issues: ["output.revision: missing"],
    });
    sim.advance(MINUTE);
    sim.decide(operator(), "draft", "returned", { note: "CMS is back." });
    const expected = {
      issues: ["output.revision: missing"],
      returned: { note: "CMS is back.", by: "olga@example.com", at: "2026-10-06T09:01:00.000Z" },
    };
    expect(agentItem(sim)?.handoff).toEqual(expected);
    const value = sim.ok(a2, { type: "claim", stepId: "draft" });
    if (value.kind !== "claim") throw new Error("no claim");
    expect(claimResult(sim.run, sim.def, value, "tok").handoff).toEqual(expected);
  });

  it("resets on rework through on_reject: the returned-to step is a fresh attempt (R2-4.4)", () => {
    const sim = draft();
    const c1 = sim.claim(a1, "draft");
    sim.ok(a1, { type: "renew", claimId: c1, progress: "Half." });
    sim.advance(CONFIG.leaseMs);
    const c2 = sim.claim(a2, "draft");
    expect(sim.run.steps.draft?.handoff).toEqual({ progress: "Half." });
    sim.ok(a2, { type: "submit", claimId: c2, output: { revision: "r1" }, summary: "Drafted." });
    sim.decide(editor, "editor_review", "rejected", { note: "Too long." });
    expect(agentItem(sim)?.handoff).toBeNull();
    const value = sim.ok(a1, { type: "claim", stepId: "draft" });
    if (value.kind !== "claim") throw new Error("no claim");
    const claim = claimResult(sim.run, sim.def, value, "tok");
    expect(claim.handoff).toBeNull();
    // The returned-to step reads the rejection note in run data instead (§3.1).
    expect(claim.data.steps.editor_review?.note).toBe("Too long.");
    expect(claim.step).toEqual({
      id: "draft",
      instructions: "Draft it. Address the editor's note on a revision.",
      output: { revision: "string" },
      evidence: [],
      next: null,
    });
    expect(claim.body).toBe(DRAFTING.process.body);
    expect(claim.expiresAt).toBe(new Date(sim.now + CONFIG.leaseMs).toISOString());
    expect(sim.now).toBeGreaterThan(T0);
  });
});
