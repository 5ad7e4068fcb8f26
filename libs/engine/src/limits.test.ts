import { describe, expect, it } from "vitest";
import { apply, startRun } from "./machine.ts";
import { jsonBytes } from "./snapshot.ts";
import { CONTRACT, DRAFTING, EVENT_REVIEW } from "./test-processes.ts";
import { agent, CONFIG, operator, person, Sim, T0 } from "./test-support.ts";
import { agentWorkItem, claimResult, indexRows, runView, workItemView } from "./view.ts";

/**
 * Limits, test mode and determinism: `limits.runDataBytes` on inputs at start, submissions and
 * held events (§6 rule 3, implementing.md Step 2); `mode: "test"` on every work item, `get_work`
 * item and claim (§3.3); the same command on the same run always gives the same outcome, which
 * idempotent replays and the fenced commit rely on (§4, ARCHITECTURE rule 1).
 */

const a1 = agent("a_one");
const editor = person("ed@example.com", ["editor"]);
const SMALL = { ...CONFIG, runDataBytes: 600 };
const big = (n: number) => "x".repeat(n);

describe("limits.runDataBytes (§6 rule 3)", () => {
  it("bounds inputs at start: over the cap is invalid and no run exists", () => {
    const outcome = startRun(
      { runId: "r_big", inputs: { contractId: big(700), owner: "o@example.com" }, mode: "live" },
      { actor: editor, now: T0, def: CONTRACT, config: SMALL },
    );
    expect("run" in outcome).toBe(false);
    expect(outcome.error).toMatchObject({ code: "invalid" });
    expect(outcome.error?.issues?.[0]).toMatch(
      /^inputs: run data would be \d+ bytes, over limits\.runDataBytes \(600\)$/,
    );
  });

  it("bounds every submission: a submission that would take run data over the cap is not_accepted, nothing changes", () => {
    const sim = Sim.start(DRAFTING, editor, {}, { config: SMALL });
    const claimId = sim.claim(a1, "draft");
    const before = structuredClone(sim.run.data);
    const refused = sim.refused(a1, {
      type: "submit",
      claimId,
      output: { revision: big(600) },
      summary: "Big.",
    });
    expect(refused.code).toBe("not_accepted");
    expect(refused.issues?.[0]).toMatch(
      /^run data: \d+ bytes with this submission, over limits\.runDataBytes \(600\)$/,
    );
    expect(sim.run.data).toEqual(before);
    expect(sim.ok(a1, { type: "submit", claimId, output: { revision: "r1" }, summary: "Small." })).toEqual({
      kind: "view",
    });
    expect(jsonBytes(sim.run.data)).toBeLessThanOrEqual(600);
  });

  it("reports the cap beside every other issue of the same submission (§6 rule 3: every issue at once)", () => {
    const sim = Sim.start(DRAFTING, editor, {}, { config: SMALL });
    const claimId = sim.claim(a1, "draft");
    const refused = sim.refused(a1, {
      type: "submit",
      claimId,
      output: { revision: big(600), extra: 1 },
      summary: "Big and wrong.",
    });
    expect(refused.code).toBe("not_accepted");
    expect(refused.issues).toEqual([
      "output.extra: not declared",
      expect.stringMatching(/^run data: \d+ bytes with this submission, over limits\.runDataBytes \(600\)$/),
    ]);
  });

  it("bounds a decision's note: a rejection whose note would take run data over the cap is not_accepted (review finding)", () => {
    const sim = Sim.start(DRAFTING, editor, {}, { config: SMALL });
    sim.work(a1, "draft", { revision: big(300) });
    const item = sim.item("editor_review");
    const refused = sim.refused(editor, {
      type: "decide",
      workItemId: item.id,
      snapshot: sim.run.snapshot,
      decision: "rejected",
      note: big(400),
    });
    expect(refused).toMatchObject({ code: "not_accepted", changed: false });
    expect(refused.issues?.[0]).toMatch(
      /^note: run data would be \d+ bytes with this decision, over limits\.runDataBytes \(600\); shorten the note$/,
    );
    expect(sim.states().editor_review).toBe("waiting");
    expect(sim.decide(editor, "editor_review", "rejected", { note: "Shorter." }).error).toBeNull();
  });

  it("counts history: a repeat that fits alone but not beside its earlier completion is refused", () => {
    const sim = Sim.start(DRAFTING, editor, {}, { config: SMALL });
    sim.work(a1, "draft", { revision: big(150) });
    sim.decide(editor, "editor_review", "rejected", { note: "Again." });
    const claimId = sim.claim(a1, "draft");
    const refused = sim.refused(a1, {
      type: "submit",
      claimId,
      output: { revision: big(250) },
      summary: "x",
    });
    expect(refused.code).toBe("not_accepted");
  });

  it("bounds held events: run data plus every held event's data must fit; a refused event is not held", () => {
    const sim = Sim.start(EVENT_REVIEW, editor, {}, { config: SMALL });
    const send = (n: number) =>
      sim.apply(a1, { type: "send_event", name: "proof_received", data: { p: big(n) } });
    expect(send(200).error).toBeNull();
    expect(send(200).error).toBeNull();
    const third = send(200);
    expect(third.error).toMatchObject({ code: "invalid" });
    expect(third.error?.issues?.[0]).toMatch(
      /^data: the run data and held events with this event would be \d+ bytes, over limits\.runDataBytes \(600\)$/,
    );
    expect(sim.run.heldEvents).toHaveLength(2);
  });

  it("bounds a consumed event: its data becomes run data", () => {
    const sim = Sim.start(EVENT_REVIEW, editor, {}, { config: SMALL });
    sim.work(a1, "prepare");
    const refused = sim.refused(operator(), {
      type: "send_event",
      name: "proof_received",
      data: { p: big(700) },
    });
    expect(refused.code).toBe("invalid");
    expect(sim.states().proof).toBe("waiting");
  });
});

describe('mode: "test" (§3.3, tools.md shared shapes)', () => {
  it("every work item, get_work item and claim of a test run says so; a live run's work items carry no mode", () => {
    const test = Sim.start(DRAFTING, editor, {}, { mode: "test" });
    expect(test.view().run.mode).toBe("test");
    const row = indexRows(test.run, test.def).ready[0];
    expect(row && agentWorkItem(row, test.now).mode).toBe("test");
    const value = test.ok(a1, { type: "claim", stepId: "draft" });
    if (value.kind !== "claim") throw new Error("no claim");
    expect(claimResult(test.run, test.def, value, "tok").mode).toBe("test");
    test.ok(a1, { type: "submit", claimId: value.claimId, output: { revision: "r" }, summary: "x" });
    const [item] = runView(test.run, test.def, test.now).workItems;
    expect(item?.mode).toBe("test");
    expect(indexRows(test.run, test.def).items[0]?.item.mode).toBe("test");

    const live = Sim.start(DRAFTING, editor);
    live.work(a1, "draft", { revision: "r" });
    const liveItem = workItemView(live.run, live.def, live.item("editor_review"), "s");
    expect("mode" in liveItem).toBe(false);
    expect(live.view().run.mode).toBe("live");
  });
});

describe("determinism (§4 replays, ARCHITECTURE rule 1)", () => {
  it("the same command on the same run at the same time gives the same outcome, and never mutates its input", () => {
    const sim = Sim.start(DRAFTING, editor);
    const frozen = structuredClone(sim.run);
    const ctx = { actor: a1, now: T0 + 1000, def: DRAFTING, config: CONFIG };
    const one = apply(sim.run, { type: "claim", stepId: "draft" }, ctx);
    const two = apply(sim.run, { type: "claim", stepId: "draft" }, ctx);
    expect(one).toEqual(two);
    expect(sim.run).toEqual(frozen);
    const s1 = startRun({ runId: "r_same", inputs: {}, mode: "live" }, { ...ctx, actor: editor });
    const s2 = startRun({ runId: "r_same", inputs: {}, mode: "live" }, { ...ctx, actor: editor });
    expect(s1).toEqual(s2);
  });

  it("per-run ids come from the run itself: work items w_<n>, claims c<n>, never reused", () => {
    const sim = Sim.start(DRAFTING, editor);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(sim.claim(a1, "draft"));
      sim.ok(a1, {
        type: "submit",
        claimId: ids[ids.length - 1] as string,
        output: { revision: `r${i}` },
        summary: "x",
      });
      ids.push(sim.item("editor_review").id);
      sim.decide(editor, "editor_review", "rejected", { note: "again" });
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^(c\d+|w_\d+)$/.test(id))).toBe(true);
  });
});
