import { describe, expect, it } from "vitest";
import { snapshotOf } from "./snapshot.ts";
import { CONTRACT, DRAFTING } from "./test-processes.ts";
import { agent, CONFIG, HOUR, MINUTE, operator, person, Sim, T0 } from "./test-support.ts";
import { agentWorkItem, indexRows, withSnapshot } from "./view.ts";

/**
 * The projections the shell serves cross-run reads from (ARCHITECTURE rule 5): the ready-steps and
 * open-work-items index rows, the agent `get_work` item built from a row, and the snapshot filled in
 * at read time (tools.md get_work, shared shapes; §3.4).
 */

const a1 = agent("a_one");
const editor = person("ed@example.com", ["editor"]);

describe("index rows and get_work items (tools.md get_work)", () => {
  it("lists a ready agent step, and a claimed one with its lease so get_work can list it once the lease ends", () => {
    const sim = Sim.start(DRAFTING, editor);
    const [ready] = indexRows(sim.run, sim.def).ready;
    expect(ready).toEqual({
      runId: "r_test",
      stepId: "draft",
      process: "drafting",
      version: 1,
      mode: "live",
      readySince: T0,
      dueAt: T0 + 4 * HOUR,
      leaseExpiresAt: null,
      progress: null,
      handoff: null,
    });
    expect(ready && agentWorkItem(ready, T0)).toEqual({
      runId: "r_test",
      stepId: "draft",
      process: "drafting",
      version: 1,
      mode: "live",
      readySince: "2026-10-06T09:00:00.000Z",
      due: "2026-10-06T13:00:00.000Z",
      overdue: false,
      handoff: null,
      claim: { tool: "claim", arguments: { runId: "r_test", stepId: "draft", requestId: "<new UUID>" } },
    });
    sim.advance(MINUTE);
    const claimId = sim.claim(a1, "draft");
    sim.ok(a1, { type: "renew", claimId, progress: "Half." });
    expect(indexRows(sim.run, sim.def).ready[0]).toMatchObject({
      leaseExpiresAt: T0 + MINUTE + CONFIG.leaseMs,
      progress: "Half.",
      readySince: T0,
    });
  });

  it("an escalated agent step leaves the ready rows and shows as an operator work item instead", () => {
    const sim = Sim.start(DRAFTING, editor);
    const claimId = sim.claim(a1, "draft");
    sim.ok(a1, { type: "escalate", claimId, note: "Stuck." });
    const rows = indexRows(sim.run, sim.def);
    expect(rows.ready).toEqual([]);
    expect(rows.items).toEqual([
      expect.objectContaining({
        group: "operators",
        person: null,
        createdAt: T0,
        item: expect.objectContaining({ snapshot: "" }),
      }),
    ]);
    sim.decide(operator(), "draft", "returned", { note: "Go on." });
    expect(indexRows(sim.run, sim.def).ready.map((r) => r.stepId)).toEqual(["draft"]);
  });

  it("a work item row is assigned to a group or to a person (lowercased for matching); the snapshot is filled at read time", () => {
    const sim = Sim.start(CONTRACT, a1, { contractId: "C", owner: "Owner@Example.com" });
    const [row] = indexRows(sim.run, sim.def).items;
    expect(row).toMatchObject({ group: null, person: "owner@example.com" });
    const item = row ? withSnapshot(row.item, sim.run.snapshot) : null;
    expect(item?.snapshot).toBe(snapshotOf(sim.run.data));
    expect(item?.decide.arguments.snapshot).toBe(sim.run.snapshot);
    expect(item).toEqual(sim.view().workItems[0]);
  });

  it("the run view's work items carry the snapshot of the run data they were read with (§3.4)", () => {
    const sim = Sim.start(DRAFTING, editor);
    sim.work(a1, "draft", { revision: "r1" });
    const view = sim.view();
    expect(view.workItems[0]?.snapshot).toBe(snapshotOf(view.data));
  });
});
