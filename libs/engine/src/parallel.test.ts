import { schemaProblems } from "@baton/conformance/schemas";
import { ok } from "@baton/protocol";
import { describe, expect, it } from "vitest";
import { INCIDENT_AGENT_COMMS, INSTANT_BRANCHES, parallelAgents } from "./test-processes.ts";
import { agent, fixture, HOUR, MINUTE, operator, person, Sim, T0 } from "./test-support.ts";
import { pendingTimers } from "./timers.ts";
import { handoffOf, indexRows } from "./view.ts";

/**
 * The parallel profile in the core (profiles/parallel.md §3–§4): fork and join in one write each,
 * branch steps worked as any step, rework inside a branch and from after the join, terminal
 * clean-up across branches, snapshots going stale on a sibling's completion, and the derived indexes
 * `get_work` reads. The checklist's round-3 traces (R3-1a–d) are replayed on the `major-incident`
 * fixture itself.
 */

const INCIDENT = fixture("major-incident");
const opener = agent("a_opener");
const ops = person("ops@example.com", ["operations-lead"]);
const sec = person("sec@example.com", ["security-lead"]);
const comms = person("comms@example.com", ["communications-lead"]);
const commander = person("commander@example.org");
const LINK = [{ kind: "link" as const, ref: "https://status.example.com/INC-42" }];
const BRANCHES = ["operations", "security", "communications"] as const;
const OUTPUT: Record<(typeof BRANCHES)[number], Record<string, string>> = {
  operations: { recoverySummary: "Service restored." },
  security: { containmentSummary: "Contained; no exposure left." },
  communications: { communicationsSummary: "Notice published." },
};
const LEAD = { operations: ops, security: sec, communications: comms };

/** R3-1a steps 1–4: started, `activate` submitted at 09:10, so the fork happens at 09:10. */
function forked(): Sim {
  const sim = Sim.start(INCIDENT, commander, { incidentId: "INC-42", commander: "commander@example.org" });
  sim.advance(10 * MINUTE);
  sim.work(opener, "activate", { bridge: "BRIDGE-42" });
  return sim;
}

function completeBranch(sim: Sim, step: (typeof BRANCHES)[number]) {
  const outcome = sim.decide(LEAD[step], step, "completed", { output: OUTPUT[step], evidence: LINK });
  expect(outcome.error).toBeNull();
  return outcome;
}

describe("R3-1a major-incident happy path (parallel.md §3 Fork and Join, §4; C §4)", () => {
  it("the submit that reaches the parallel step returns the fork already made: the step waiting, every entry waiting with its own item and due", () => {
    const sim = Sim.start(INCIDENT, commander, { incidentId: "INC-42", commander: "commander@example.org" });
    expect(sim.view().run.state).toBe("active");
    expect(sim.view().workItems).toEqual([]);
    sim.advance(10 * MINUTE);
    const claimId = sim.claim(opener, "activate");
    const outcome = sim.apply(opener, {
      type: "submit",
      claimId,
      output: { bridge: "BRIDGE-42" },
      evidence: LINK,
      summary: "Opened the bridge and paged the leads.",
    });
    expect(outcome.error).toBeNull();
    // One write: the outcome of this submit carries the whole fork (§4 "a write returns only after
    // every automatic transition it triggered").
    const view = sim.view();
    const due = new Date(T0 + 10 * MINUTE + HOUR).toISOString();
    expect(view.run.state).toBe("waiting");
    expect(view.steps).toEqual([
      { id: "activate", kind: "agent", state: "done" },
      { id: "respond", kind: "parallel", state: "waiting" },
      { id: "operations", kind: "task", state: "waiting", due, overdue: false },
      { id: "security", kind: "task", state: "waiting", due, overdue: false },
      { id: "communications", kind: "task", state: "waiting", due, overdue: false },
      { id: "close_review", kind: "approve", state: null },
      { id: "done", kind: "finish", state: null },
    ]);
    expect(view.workItems.map((w) => [w.stepId, w.assignedTo, w.due, w.handoff])).toEqual([
      ["operations", { group: "operations-lead" }, due, null],
      ["security", { group: "security-lead" }, due, null],
      ["communications", { group: "communications-lead" }, due, null],
    ]);
    expect(new Set(view.workItems.map((w) => w.id)).size).toBe(3);
    // The parallel step records nothing in run data (C §3.1, parallel.md §3 Run data).
    expect(Object.keys(view.data.steps)).toEqual(["activate"]);
    expect(outcome.events.filter((e) => e.type === "work_item.opened").map((e) => e.stepId)).toEqual([
      ...BRANCHES,
    ]);
    expect(schemaProblems("submit", ok(view))).toEqual([]);
  });

  it("each lead completes their own branch; the last completion makes respond done and opens close_review in the same write; approval ends the run stabilized", () => {
    const sim = forked();
    const item = sim.view().workItems.find((w) => w.stepId === "operations");
    expect(item).toMatchObject({
      kind: "task",
      text: "Restore service. Attach the recovery evidence.",
      output: { recoverySummary: "string" },
      evidence: ["link"],
      next: null,
      assignedTo: { group: "operations-lead" },
      handoff: null,
      decide: { decisions: ["completed", "failed"] },
    });
    sim.advance(5 * MINUTE);
    completeBranch(sim, "operations");
    expect(sim.states()).toMatchObject({ operations: "done", respond: "waiting", close_review: null });
    expect(sim.view().workItems.map((w) => w.stepId)).toEqual(["security", "communications"]);
    completeBranch(sim, "security");
    expect(sim.states()).toMatchObject({ security: "done", respond: "waiting", close_review: null });
    sim.advance(5 * MINUTE);
    const last = completeBranch(sim, "communications");
    expect(last.error).toBeNull();
    const view = sim.view();
    expect(sim.states()).toMatchObject({ communications: "done", respond: "done", close_review: "waiting" });
    expect(view.workItems.map((w) => [w.stepId, w.assignedTo])).toEqual([
      ["close_review", { person: "commander@example.org" }],
    ]);
    // Still nothing recorded for the parallel step after the join (review expected `respond.at`).
    expect(view.data.steps.respond).toBeUndefined();
    expect(view.data.steps.communications).toMatchObject({
      output: { communicationsSummary: "Notice published." },
      by: "comms@example.com",
      at: new Date(T0 + 20 * MINUTE).toISOString(),
    });
    sim.decide(commander, "close_review", "approved");
    const end = sim.view();
    expect(end.run).toMatchObject({
      state: "ended",
      outcome: "stabilized",
      ended: { by: "server", at: new Date(T0 + 20 * MINUTE).toISOString(), note: null },
    });
    expect(end.workItems).toEqual([]);
    expect(end.data.steps.close_review).toEqual({
      decision: "approved",
      by: "commander@example.org",
      at: new Date(T0 + 20 * MINUTE).toISOString(),
      history: [],
    });
    expect(schemaProblems("decide", ok(end))).toEqual([]);
  });

  it("three people at once: each completion is its own write, in any order, and the join happens on whichever is last", () => {
    for (const order of [
      ["communications", "operations", "security"],
      ["security", "communications", "operations"],
    ] as const) {
      const sim = forked();
      for (const [i, step] of order.entries()) {
        completeBranch(sim, step);
        expect(sim.states().respond).toBe(i === 2 ? "done" : "waiting");
      }
      expect(sim.states().close_review).toBe("waiting");
    }
  });
});

describe("R3-1b a sibling's completion stales a prepared decision (C §3.4, parallel.md §3 Snapshots)", () => {
  it("stale, nothing recorded and the item still open; a fresh read and the same decision succeed; it can be refused more than once", () => {
    const sim = forked();
    const b0 = sim.run.snapshot;
    const secItem = sim.item("security");
    completeBranch(sim, "operations");
    const decision = {
      type: "decide" as const,
      workItemId: secItem.id,
      decision: "completed" as const,
      output: OUTPUT.security,
      evidence: LINK,
    };
    const before = sim.run;
    expect(sim.refused(sec, { ...decision, snapshot: b0 })).toEqual({
      code: "stale",
      issues: undefined,
      changed: false,
    });
    expect(sim.run).toBe(before);
    expect(sim.item("security").id).toBe(secItem.id);
    // A fresh read shows what the sibling did before deciding.
    const b1 = sim.view().workItems.find((w) => w.stepId === "security")?.snapshot as string;
    expect(b1).not.toBe(b0);
    expect(sim.view().data.steps.operations?.output).toEqual(OUTPUT.operations);
    // Another sibling completes between that read and the decision: refused again.
    completeBranch(sim, "communications");
    expect(sim.refused(sec, { ...decision, snapshot: b1 }).code).toBe("stale");
    const b2 = sim.run.snapshot;
    expect(sim.apply(sec, { ...decision, snapshot: b2 }).error).toBeNull();
    expect(sim.states()).toMatchObject({ security: "done", respond: "done", close_review: "waiting" });
  });
});

describe("R3-1c a branch ends the run (T claim, C §3.5, parallel.md §3 Ending the run from a branch)", () => {
  it("an agent claiming a person branch step is forbidden", () => {
    const sim = forked();
    expect(sim.refused(agent("a_comms"), { type: "claim", stepId: "communications" }).code).toBe("forbidden");
  });

  it("a failed decision in one branch ends the run: every unfinished step in every branch cancelled, items gone, the sibling's token dead", () => {
    const sim = Sim.start(INCIDENT_AGENT_COMMS, commander, {
      incidentId: "INC-42",
      commander: "commander@example.org",
    });
    sim.work(opener, "activate", { bridge: "BRIDGE-42" });
    const bot = agent("a_comms");
    const claimId = sim.claim(bot, "communications");
    expect(sim.view().run.state).toBe("active");
    const c0 = sim.run.snapshot;
    const secItem = sim.item("security");
    sim.advance(MINUTE);
    expect(
      sim.decide(ops, "operations", "failed", { note: "Cannot restore: datacenter offline." }).error,
    ).toBeNull();
    const view = sim.view();
    const at = new Date(T0 + MINUTE).toISOString();
    expect(view.run).toMatchObject({
      state: "ended",
      outcome: "failed",
      ended: { by: "ops@example.com", at, note: "Cannot restore: datacenter offline." },
    });
    expect(sim.states()).toEqual({
      activate: "done",
      respond: "cancelled",
      operations: "failed",
      security: "cancelled",
      communications: "cancelled",
      close_review: null,
      done: null,
    });
    expect(view.workItems).toEqual([]);
    expect(view.data.steps.operations).toEqual({
      decision: "failed",
      note: "Cannot restore: datacenter offline.",
      by: "ops@example.com",
      at,
      history: [],
    });
    expect(pendingTimers(sim.run, () => undefined)).toEqual([]);
    expect(indexRows(sim.run, sim.def)).toEqual({ ready: [], items: [] });
    // Late writes: run_ended, checked before anything else.
    const late = sim.refused(bot, {
      type: "submit",
      claimId,
      output: { communicationsSummary: "x" },
      evidence: LINK,
      summary: "Late.",
    });
    expect(late).toMatchObject({ code: "conflict", issues: ["run_ended"] });
    const lateDecide = sim.refused(sec, {
      type: "decide",
      workItemId: secItem.id,
      snapshot: c0,
      decision: "completed",
      output: OUTPUT.security,
      evidence: LINK,
    });
    expect(lateDecide).toMatchObject({ code: "conflict", issues: ["run_ended"] });
  });

  it("cancel with branches open: every branch step and the parallel step cancelled, claims ended (C §3.5)", () => {
    const sim = Sim.start(parallelAgents(), person("mira@example.com"));
    sim.work(agent("a_brief"), "brief", { brief: "b" });
    sim.claim(agent("a_research"), "research");
    sim.ok(operator(), { type: "cancel", reason: "Topic dropped." });
    expect(sim.states()).toMatchObject({
      split: "cancelled",
      research: "cancelled",
      draft: "cancelled",
      legal: "cancelled",
      draft_review: null,
    });
    expect(Object.values(sim.run.steps).every((r) => r.claim === null)).toBe(true);
    expect(sim.refused(agent("a_research"), { type: "claim", stepId: "draft" }).issues).toEqual([
      "run_ended",
    ]);
  });
});

describe("R3-1d the commander rejects back to the parallel step (parallel.md §3 Rework, C §3.1)", () => {
  it("rewinds the whole region and re-forks in the same write with a fresh due; the rejection note stays current; a second round ends the run", () => {
    const sim = forked();
    for (const step of BRANCHES) completeBranch(sim, step);
    const firstItems = sim.view().workItems.map((w) => w.id);
    sim.advance(30 * MINUTE);
    const note = "Security has not attached the forensic link.";
    expect(sim.decide(commander, "close_review", "rejected", { note }).error).toBeNull();
    const view = sim.view();
    const rejectedAt = new Date(T0 + 40 * MINUTE).toISOString();
    const due = new Date(T0 + 40 * MINUTE + HOUR).toISOString();
    expect(view.run.state).toBe("waiting");
    expect(view.steps).toEqual([
      { id: "activate", kind: "agent", state: "done" },
      { id: "respond", kind: "parallel", state: "waiting" },
      { id: "operations", kind: "task", state: "waiting", due, overdue: false },
      { id: "security", kind: "task", state: "waiting", due, overdue: false },
      { id: "communications", kind: "task", state: "waiting", due, overdue: false },
      { id: "close_review", kind: "approve", state: null },
      { id: "done", kind: "finish", state: null },
    ]);
    // New work items for every entry, each a fresh attempt (handoff null, K §3).
    expect(view.workItems.map((w) => w.stepId)).toEqual([...BRANCHES]);
    expect(view.workItems.every((w) => w.handoff === null && !firstItems.includes(w.id))).toBe(true);
    for (const step of BRANCHES) {
      expect(view.data.steps[step]).toEqual({
        history: [
          {
            output: OUTPUT[step],
            evidence: LINK,
            by: LEAD[step].id,
            at: new Date(T0 + 10 * MINUTE).toISOString(),
          },
        ],
      });
    }
    expect(view.data.steps.close_review).toEqual({
      decision: "rejected",
      note,
      by: "commander@example.org",
      at: rejectedAt,
      history: [],
    });
    expect(view.data.steps.activate?.history).toEqual([]);
    expect(view.data.steps.activate?.output).toEqual({ bridge: "BRIDGE-42" });
    // Round two.
    for (const step of BRANCHES) completeBranch(sim, step);
    expect(sim.states()).toMatchObject({ respond: "done", close_review: "waiting" });
    sim.decide(commander, "close_review", "approved");
    const end = sim.view();
    expect(end.run).toMatchObject({ state: "ended", outcome: "stabilized" });
    expect(end.data.steps.close_review?.history).toEqual([
      { decision: "rejected", note, by: "commander@example.org", at: rejectedAt },
    ]);
    expect(end.data.steps.security?.history).toHaveLength(1);
  });

  it("a rejection to a step before the parallel step rewinds the parallel step too (null), and the fork happens again when it is reached", () => {
    const sim = Sim.start(parallelAgents("brief"), person("mira@example.com"));
    const editor = person("ed@example.com", ["editor"]);
    sim.work(agent("a_brief"), "brief", { brief: "b1" });
    sim.work(agent("a_research"), "research", { findings: "f" });
    sim.work(agent("a_draft"), "draft", { text: "t" });
    sim.decide(editor, "draft_review", "approved");
    sim.ok(agent("a_legal"), { type: "send_event", name: "legal_cleared", data: { ok: true } });
    sim.work(agent("a_merge"), "merge");
    sim.decide(editor, "final", "rejected", { note: "Start over from the brief." });
    expect(sim.states()).toEqual({
      brief: "ready",
      split: null,
      research: null,
      draft: null,
      draft_review: null,
      legal: null,
      merge: null,
      final: null,
      done: null,
    });
    sim.work(agent("a_brief"), "brief", { brief: "b2" });
    expect(sim.states()).toMatchObject({
      split: "waiting",
      research: "ready",
      draft: "ready",
      legal: "waiting",
    });
    expect(sim.view().data.steps.research?.history).toHaveLength(1);
  });
});

describe("branch steps are worked as any step (parallel.md §3 Fork, §4)", () => {
  const editor = person("ed@example.com", ["editor"]);

  function started(now = T0) {
    const sim = Sim.start(parallelAgents(), person("mira@example.com"), {}, { now });
    sim.work(agent("a_brief"), "brief", { brief: "b" });
    return sim;
  }

  it("get_work's index lists every ready agent branch step; different agents hold claims on them at once", () => {
    const sim = started();
    const ready = indexRows(sim.run, sim.def).ready.map((r) => [r.stepId, r.readySince, r.dueAt]);
    expect(ready).toEqual([
      ["research", T0, T0 + 2 * HOUR],
      ["draft", T0, T0 + 4 * HOUR],
    ]);
    const researcher = agent("a_research");
    const drafter = agent("a_draft");
    const c1 = sim.claim(researcher, "research");
    const c2 = sim.claim(drafter, "draft");
    expect(sim.states()).toMatchObject({
      research: "claimed",
      draft: "claimed",
      legal: "waiting",
      split: "waiting",
    });
    expect(sim.view().run.state).toBe("active");
    // Each claim is its own: the other agent's claim on a sibling changes nothing for it.
    expect(sim.refused(drafter, { type: "claim", stepId: "research" }).issues).toEqual(["claimed_by_other"]);
    sim.ok(drafter, { type: "submit", claimId: c2, output: { text: "t" }, summary: "Drafted." });
    sim.ok(researcher, { type: "submit", claimId: c1, output: { findings: "f" }, summary: "Researched." });
    expect(sim.states()).toMatchObject({
      research: "done",
      draft: "done",
      draft_review: "waiting",
      split: "waiting",
    });
    expect(indexRows(sim.run, sim.def).items.map((r) => r.item.stepId)).toEqual(["draft_review"]);
  });

  it("every ready branch step and every open branch work item are in the derived indexes at once", () => {
    const sim = Sim.start(INCIDENT_AGENT_COMMS, commander, {
      incidentId: "I",
      commander: "commander@example.org",
    });
    sim.work(opener, "activate", { bridge: "B" });
    const rows = indexRows(sim.run, sim.def);
    expect(rows.ready.map((r) => r.stepId)).toEqual(["communications"]);
    expect(rows.items.map((r) => [r.item.stepId, r.group])).toEqual([
      ["operations", "operations-lead"],
      ["security", "security-lead"],
    ]);
  });

  it("timers per branch entry: each due from the fork, a lease per claim, a wait_for's time-out that joins", () => {
    const sim = started();
    const researcher = agent("a_research");
    sim.claim(researcher, "research");
    const kind = (id: string) => sim.def.process.steps.find((s) => s.id === id)?.kind;
    expect(pendingTimers(sim.run, kind).map((t) => [t.kind, t.stepId, t.at - T0])).toEqual(
      [
        ["due", "research", 2 * HOUR],
        ["due", "draft", 4 * HOUR],
        ["lease", "research", 10 * MINUTE],
        ["timeout", "legal", 24 * HOUR],
      ].sort((a, b) => (a[2] as number) - (b[2] as number)),
    );
    sim.advance(2 * HOUR).tick();
    expect(sim.events.filter((e) => e.type === "step.overdue").map((e) => e.stepId)).toEqual(["research"]);
    expect(sim.states().research).toBe("ready"); // the lease ended at 09:10; the work stays open
    sim.work(researcher, "research", { findings: "f" });
    sim.work(agent("a_draft"), "draft", { text: "t" });
    sim.decide(editor, "draft_review", "approved");
    expect(sim.states()).toMatchObject({ legal: "waiting", split: "waiting" });
    sim.advance(22 * HOUR).tick();
    // The time-out continued at `join`: the last branch, so the run moves on in that same tick.
    expect(sim.states()).toMatchObject({ legal: "done", split: "done", merge: "ready" });
    expect(sim.view().data.steps.legal).toMatchObject({
      by: "server",
      at: new Date(T0 + 24 * HOUR).toISOString(),
    });
  });

  it("an event delivered to a branch's wait_for joins that branch", () => {
    const sim = started();
    expect(
      sim.ok(agent("a_legal"), { type: "send_event", name: "legal_cleared", data: { ref: "L-1" } }),
    ).toEqual({
      kind: "send_event",
      consumedBy: "legal",
    });
    expect(sim.states()).toMatchObject({ legal: "done", split: "waiting" });
    expect(sim.run.steps.split?.joined).toEqual(["legal"]);
  });

  it("on_reject inside a branch rewinds only that branch: the sibling's completion stays current and the join waits", () => {
    const sim = started();
    sim.work(agent("a_research"), "research", { findings: "f" });
    sim.work(agent("a_draft"), "draft", { text: "t1" });
    const researchBefore = sim.run.data.steps.research;
    sim.advance(HOUR);
    sim.decide(editor, "draft_review", "rejected", { note: "Shorter, please." });
    expect(sim.states()).toMatchObject({
      research: "done",
      draft: "ready",
      draft_review: null,
      legal: "waiting",
      split: "waiting",
    });
    expect(sim.run.data.steps.research).toEqual(researchBefore);
    expect(sim.run.data.steps.draft_review).toMatchObject({ decision: "rejected", note: "Shorter, please." });
    // The draft is a fresh attempt: `due` restarts from the rejection.
    expect(sim.view().steps.find((s) => s.id === "draft")?.due).toBe(new Date(T0 + 5 * HOUR).toISOString());
    sim.work(agent("a_draft"), "draft", { text: "t2" });
    sim.decide(editor, "draft_review", "approved");
    expect(sim.states().split).toBe("waiting");
    sim.ok(agent("a_legal"), { type: "send_event", name: "legal_cleared" });
    expect(sim.states()).toMatchObject({ split: "done", merge: "ready" });
    expect(sim.run.data.steps.draft?.history).toEqual([expect.objectContaining({ output: { text: "t1" } })]);
  });

  it("branches that join the moment they are forked complete the fork and the join in the same write", () => {
    const sim = Sim.start(INSTANT_BRANCHES, person("mira@example.com"), { past: "2026-01-01T00:00:00Z" });
    expect(sim.states()).toEqual({ fork: "done", first: "done", second: "done", after: "ready", done: null });
    expect(sim.view().run.state).toBe("active");
  });
});

describe("escalation inside a branch (parallel.md §3: each branch step has its own escalation)", () => {
  it("an agent branch step escalated and returned keeps its own due; its siblings are untouched", () => {
    const sim = Sim.start(parallelAgents(), person("mira@example.com"));
    sim.work(agent("a_brief"), "brief", { brief: "b" });
    const researcher = agent("a_research");
    const claimId = sim.claim(researcher, "research");
    const drafter = agent("a_draft");
    const c2 = sim.claim(drafter, "draft");
    sim.advance(5 * MINUTE);
    sim.ok(researcher, { type: "escalate", claimId, note: "No sources reachable." });
    expect(sim.states()).toMatchObject({
      research: "waiting",
      draft: "claimed",
      legal: "waiting",
      split: "waiting",
    });
    expect(sim.view().workItems.map((w) => [w.stepId, w.kind, w.assignedTo])).toEqual([
      ["research", "agent", { group: "operators" }],
    ]);
    sim.ok(drafter, { type: "submit", claimId: c2, output: { text: "t" }, summary: "Drafted." });
    sim.decide(operator(), "research", "returned", { note: "Use the cached sources." });
    expect(sim.states()).toMatchObject({ research: "ready", draft: "done", draft_review: "waiting" });
    expect(sim.view().steps.find((s) => s.id === "research")?.due).toBe(
      new Date(T0 + 2 * HOUR).toISOString(),
    );
    expect(handoffOf(sim.run, "research")).toMatchObject({ returned: { note: "Use the cached sources." } });
  });
});
