import { beforeEach, describe, expect, it } from "vitest";
import type { McpSession } from "../mcp.ts";
import { type Data, type Harness, refused, rid, stateOf, statesOf } from "../support.ts";

/**
 * The parallel profile (profiles/parallel.md, `parallel-1`) over MCP: the checklist's round-3 traces
 * on the `major-incident` fixture (R3-1a–d and the open points they settle) — the fork and the join
 * in one write each, three leads completing at once, a sibling's completion making a prepared
 * decision `stale`, a failed branch ending the run, and a rejection after the join rewinding the
 * region — and agent branches claimed by different agents at once (`parallel-agents`).
 */

const HOUR = 3_600_000;
const COMMANDER = "commander@example.org";
const LINK = [{ kind: "link", ref: "https://status.example.com/INC-42" }];
const BRANCHES = ["operations", "security", "communications"] as const;
type Branch = (typeof BRANCHES)[number];
const OUTPUT: Record<Branch, Record<string, string>> = {
  operations: { recoverySummary: "Service restored." },
  security: { containmentSummary: "Contained; no exposure left." },
  communications: { communicationsSummary: "Notice published." },
};
const INPUTS = { incidentId: "INC-42", commander: COMMANDER };

export function parallelScenarios(h: Harness): void {
  describe("parallel profile: fork, join, snapshots and rework (parallel.md §3–§4)", () => {
    beforeEach((context) => {
      const reason = h.missingProfile("parallel-1");
      if (reason) context.skip(reason);
    });
    const leads = () =>
      h.sessionsOf({
        operations: { kind: "person", id: "ops@example.com", groups: ["operations-lead"] },
        security: { kind: "person", id: "sec@example.com", groups: ["security-lead"] },
        communications: { kind: "person", id: "comms@example.com", groups: ["communications-lead"] },
        commander: { kind: "person", id: COMMANDER },
      });

    /** A major-incident run (or its agent-communications variant) with `activate` submitted: the fork is made. */
    async function forked(process = "major-incident", agentId = "a_incident") {
      const opener = await h.agent(agentId);
      const started = await opener.ok("start_run", { process, version: 1, inputs: INPUTS, mode: "live" });
      const runId = started.run.id as string;
      const view = await h.work(opener, runId, "activate", { bridge: "BRIDGE-42" });
      return { opener, runId, view };
    }

    /** The open work item of `stepId` in a run view. */
    const itemOf = (view: Data, stepId: string) => view.workItems.find((w: Data) => w.stepId === stepId);

    /**
     * A lead completes their branch as a person does: read the run (a fresh snapshot), decide with it;
     * on `stale` (a sibling completed in between, §3 Snapshots) read again and decide again with the
     * same `requestId` (a refused call is not recorded, §4). Returns the view and how often it was stale.
     */
    async function completeBranch(lead: McpSession, runId: string, step: Branch) {
      const requestId = rid();
      for (let stale = 0; stale < 20; stale++) {
        const read = await lead.ok("get_run", { runId });
        const item = itemOf(read, step);
        expect(item, `${step} has an open item`).toBeDefined();
        const result = await lead.call("decide", {
          ...item.decide.arguments,
          requestId,
          decision: "completed",
          output: OUTPUT[step],
          evidence: LINK,
        });
        if (result.ok) return { view: result.data, stale };
        refused(result, "stale");
      }
      throw new Error(`${step}: stale twenty times`);
    }

    /** All three leads complete their branches at once; returns each completion's view in branch order. */
    async function completeAll(runId: string) {
      const who = await leads();
      return Promise.all(BRANCHES.map((b) => completeBranch(who[b], runId, b)));
    }

    it("[R3-1a R2-B11 R3-Q2 R3-Q3 R3-Q13] major-incident happy path: the submit that reaches the parallel step returns the fork made in its write; three leads complete at once; the last completion joins in its write; the commander closes it (parallel.md §3 Fork, Join, Run data; §4; C §4)", async () => {
      const opener = await h.agent("a_incident");
      const started = await opener.ok("start_run", {
        process: "major-incident",
        version: 1,
        inputs: INPUTS,
        mode: "live",
        requestId: rid(),
      });
      const runId = started.run.id as string;
      expect(started.run.state).toBe("active");
      expect(stateOf(started, "activate")).toBe("ready");
      expect(started.workItems).toEqual([]);

      const item = await h.agentItem(opener, runId, "activate", "major-incident");
      expect(item.claim).toEqual({
        tool: "claim",
        arguments: { runId, stepId: "activate", requestId: "<new UUID>" },
      });
      const claim = await opener.ok("claim", { ...item.claim.arguments, requestId: rid() });
      expect(claim).toMatchObject({
        mode: "live",
        step: { id: "activate", output: { bridge: "string" }, evidence: [] },
        data: { inputs: INPUTS, steps: {} },
      });
      expect(typeof claim.body).toBe("string");
      const submitted = await opener.ok("submit", {
        token: claim.token,
        output: { bridge: "BRIDGE-42" },
        summary: "Opened the bridge and paged the three leads.",
      });
      // The fork is made in the write that reached the parallel step (R2-B11, R3-Q2): the submit's own
      // view shows it, every entry with its own work item and a due clock from the fork (R3-Q13).
      const forkedAt = Date.parse(submitted.data.steps.activate.at);
      const due = new Date(forkedAt + HOUR).toISOString();
      expect(submitted.run.state).toBe("waiting");
      expect(submitted.steps).toEqual([
        { id: "activate", kind: "agent", state: "done" },
        { id: "respond", kind: "parallel", state: "waiting" },
        { id: "operations", kind: "task", state: "waiting", due, overdue: false },
        { id: "security", kind: "task", state: "waiting", due, overdue: false },
        { id: "communications", kind: "task", state: "waiting", due, overdue: false },
        { id: "close_review", kind: "approve", state: null },
        { id: "done", kind: "finish", state: null },
      ]);
      expect(submitted.workItems.map((w: Data) => [w.stepId, w.assignedTo, w.due, w.handoff])).toEqual([
        ["operations", { group: "operations-lead" }, due, null],
        ["security", { group: "security-lead" }, due, null],
        ["communications", { group: "communications-lead" }, due, null],
      ]);
      // The parallel step records nothing in run data (R3-Q3).
      expect(Object.keys(submitted.data.steps)).toEqual(["activate"]);

      // Each lead finds their own item (parallel.md §3: each branch step has its own work item).
      const who = await leads();
      for (const b of BRANCHES) {
        const own = await h.workItem(who[b], runId, b);
        expect(own).toMatchObject({
          stepId: b,
          kind: "task",
          output: Object.fromEntries(Object.keys(OUTPUT[b]).map((k) => [k, "string"])),
          evidence: ["link"],
          next: null,
          assignedTo: { group: `${b}-lead` },
          due,
          handoff: null,
          decide: { tool: "decide", decisions: ["completed", "failed"] },
        });
        expect(own.snapshot).toMatch(/^[0-9a-f]{64}$/);
      }

      // The three leads complete at the same time; whoever is refused as stale reads and decides again.
      const completions = await completeAll(runId);
      for (const [i, b] of BRANCHES.entries()) {
        const { view } = completions[i] as { view: Data };
        expect(stateOf(view, b)).toBe("done");
        expect(itemOf(view, b)).toBeUndefined();
        expect(view.data.steps[b]).toMatchObject({ output: OUTPUT[b], evidence: LINK });
      }
      // Exactly one completion joined: in its own write the parallel step became done and the
      // commander's item appeared; the others returned with the parallel step still waiting.
      const joined = completions.filter((c) => stateOf(c.view, "respond") === "done");
      expect(joined).toHaveLength(1);
      const atJoin = (joined[0] as { view: Data }).view;
      expect(atJoin.workItems.map((w: Data) => [w.stepId, w.kind, w.assignedTo])).toEqual([
        ["close_review", "approve", { person: COMMANDER }],
      ]);
      for (const c of completions.filter((x) => x !== joined[0])) {
        expect(stateOf(c.view, "respond")).toBe("waiting");
        expect(itemOf(c.view, "close_review")).toBeUndefined();
      }
      expect(atJoin.data.steps.respond).toBeUndefined();

      const ended = await h.decided(who.commander, runId, "close_review", "approved");
      expect(ended.run).toMatchObject({ state: "ended", outcome: "stabilized", ended: { by: "server" } });
      expect(ended.workItems).toEqual([]);
      expect(ended.data.steps.close_review).toMatchObject({ decision: "approved", by: COMMANDER });
      expect(ended.data.steps.respond).toBeUndefined();
      expect(stateOf(ended, "respond")).toBe("done");
    });

    it("[R3-1b R3-3b R3-Q8] a sibling's completion makes a prepared decision stale, more than once while siblings keep completing; the refused call is not recorded, so the same requestId succeeds with a fresh snapshot (parallel.md §3 Snapshots; C §3.4, §4)", async () => {
      const { runId } = await forked();
      const who = await leads();
      const b0 = (await who.security.ok("get_run", { runId })).workItems;
      const secItem = b0.find((w: Data) => w.stepId === "security");
      const opsItem = (await who.operations.ok("get_run", { runId })).workItems.find(
        (w: Data) => w.stepId === "operations",
      );
      expect(opsItem.snapshot).toBe(secItem.snapshot);

      await who.operations.ok("decide", {
        ...opsItem.decide.arguments,
        decision: "completed",
        output: OUTPUT.operations,
        evidence: LINK,
      });
      const requestId = `ib-sec-${rid()}`;
      const decideSecurity = (snapshot: string) =>
        who.security.call("decide", {
          ...secItem.decide.arguments,
          snapshot,
          requestId,
          decision: "completed",
          output: OUTPUT.security,
          evidence: LINK,
        });
      refused(await decideSecurity(secItem.snapshot), "stale");
      const b1 = await who.security.ok("get_run", { runId });
      // Nothing was recorded: the item is still open, and the lead now sees what operations did.
      expect(itemOf(b1, "security")).toBeDefined();
      expect(b1.data.steps.security).toBeUndefined();
      expect(b1.data.steps.operations.output).toEqual(OUTPUT.operations);
      expect(itemOf(b1, "security").snapshot).not.toBe(secItem.snapshot);

      // Another sibling completes between that read and the decision: stale a second time (R3-Q8).
      await h.decided(who.communications, runId, "communications", "completed", {
        output: OUTPUT.communications,
        evidence: LINK,
      });
      refused(await decideSecurity(itemOf(b1, "security").snapshot), "stale");
      const b2 = await who.security.ok("get_run", { runId });
      const done = await decideSecurity(itemOf(b2, "security").snapshot);
      expect(done.ok, JSON.stringify(done)).toBe(true);
      // The last branch's completion joined in the same write.
      expect(stateOf((done as Data).data, "respond")).toBe("done");
      expect(itemOf((done as Data).data, "close_review")).toBeDefined();
    });

    it("[R3-1c] an agent claiming a person's branch step is forbidden; with communications an agent step, a failed branch ends the run: every unfinished step in every branch cancelled, the agent's token dead, late writes run_ended (parallel.md §3 Ending the run from a branch; C §3.5; tools.md claim)", async () => {
      const incident = await forked();
      const claimPerson = await incident.opener.call("claim", {
        runId: incident.runId,
        stepId: "communications",
        requestId: rid(),
      });
      refused(claimPerson, "forbidden");

      const { runId } = await forked("incident-agent-comms", "a_comms_opener");
      const agent = await h.agent("a_comms");
      const claim = await h.claim(agent, runId, "communications");
      const who = await leads();
      const c0 = await who.security.ok("get_run", { runId });
      expect(stateOf(c0, "communications")).toBe("claimed");
      expect(c0.run.state).toBe("active");
      const c0Item = itemOf(c0, "security");

      const note = "Cannot restore: the data centre is offline.";
      const failed = await h.decided(who.operations, runId, "operations", "failed", { note });
      expect(failed.run).toMatchObject({ state: "ended", outcome: "failed", ended: { note } });
      expect(statesOf(failed)).toMatchObject({
        activate: "done",
        respond: "cancelled",
        operations: "failed",
        security: "cancelled",
        communications: "cancelled",
        close_review: null,
      });
      expect(failed.workItems).toEqual([]);
      expect(failed.data.steps.operations).toEqual({
        decision: "failed",
        note,
        by: "ops@example.com",
        at: expect.any(String),
        history: [],
      });

      const late = await agent.call("submit", {
        token: claim.token,
        output: OUTPUT.communications,
        evidence: LINK,
        summary: "Published the notice.",
        requestId: rid(),
      });
      refused(late, "conflict", ["run_ended"]);
      const lateDecision = await who.security.call("decide", {
        ...c0Item.decide.arguments,
        requestId: rid(),
        decision: "completed",
        output: OUTPUT.security,
        evidence: LINK,
      });
      refused(lateDecision, "conflict", ["run_ended"]);
      for (const reader of [agent, who.operations, who.security, who.commander]) {
        const view = await reader.ok("get_run", { runId });
        expect(view.run.state).toBe("ended");
        expect(view.workItems).toEqual([]);
      }
    });

    it("[R3-1d R3-Q7 R3-Q13 R3-Q18] the commander rejects back to the parallel step after the join: branch completions to history, every entry ready again in the same write with a fresh due and a new work item, the note current; all three again, then approved (parallel.md §3 Rework; C §3.1)", async () => {
      const { runId, view: atFork } = await forked();
      const firstItems = atFork.workItems.map((w: Data) => w.id);
      const firstDue = atFork.workItems[0].due;
      await completeAll(runId);
      const who = await leads();
      const note = "Security containment lacks the firewall change reference.";
      const rejected = await h.decided(who.commander, runId, "close_review", "rejected", { note });

      const rejectedAt = rejected.data.steps.close_review.at as string;
      const due = new Date(Date.parse(rejectedAt) + HOUR).toISOString();
      expect(Date.parse(due)).toBeGreaterThanOrEqual(Date.parse(firstDue));
      expect(rejected.run.state).toBe("waiting");
      expect(statesOf(rejected)).toMatchObject({
        activate: "done",
        respond: "waiting",
        operations: "waiting",
        security: "waiting",
        communications: "waiting",
      });
      // The rejecting approval keeps its decision current; the leads read the note there (R3-Q6).
      expect(rejected.data.steps.close_review).toEqual({
        decision: "rejected",
        note,
        by: COMMANDER,
        at: rejectedAt,
        history: [],
      });
      // Every branch completion moved to history; activate is untouched.
      expect(rejected.data.steps.activate.output).toEqual({ bridge: "BRIDGE-42" });
      for (const b of BRANCHES) {
        const record = rejected.data.steps[b];
        expect(record.output).toBeUndefined();
        expect(record.history).toHaveLength(1);
        expect(record.history[0]).toMatchObject({ output: OUTPUT[b], evidence: LINK });
      }
      expect(rejected.data.steps.respond).toBeUndefined();
      // New work items, fresh due, handoff null: the only marker of a second occurrence (R3-Q7).
      expect(rejected.workItems.map((w: Data) => [w.stepId, w.due, w.handoff])).toEqual(
        BRANCHES.map((b) => [b, due, null]),
      );
      for (const w of rejected.workItems) expect(firstItems).not.toContain(w.id);
      for (const b of BRANCHES) {
        const step = rejected.steps.find((s: Data) => s.id === b);
        expect(step).toMatchObject({ due, overdue: false });
      }

      await completeAll(runId);
      const ended = await h.decided(who.commander, runId, "close_review", "approved");
      expect(ended.run).toMatchObject({ state: "ended", outcome: "stabilized" });
      expect(ended.data.steps.close_review).toMatchObject({ decision: "approved", by: COMMANDER });
      expect(ended.data.steps.close_review.history).toEqual([
        { decision: "rejected", note, by: COMMANDER, at: rejectedAt },
      ]);
      for (const b of BRANCHES) {
        expect(ended.data.steps[b].output).toEqual(OUTPUT[b]);
        expect(ended.data.steps[b].history).toHaveLength(1);
      }
    });

    it("agent branches: get_work lists every ready branch step; different agents claim them at the same time; a rejection inside one branch reworks only that branch; both join and the run goes on (parallel.md §3 Fork, Rework; §4)", async () => {
      const starter = await h.agent("a_brief");
      const editor = await h.person("ed@example.com", ["editor"]);
      const runId = (await starter.ok("start_run", { process: "parallel-agents", inputs: { topic: "T" } }))
        .run.id as string;
      const forkedView = await h.work(starter, runId, "brief", { brief: "The brief." });
      expect(statesOf(forkedView)).toMatchObject({ split: "waiting", research: "ready", draft: "ready" });
      expect(forkedView.run.state).toBe("active");

      const [researcher, drafter, latecomer] = await Promise.all([
        h.agent("a_researcher"),
        h.agent("a_drafter"),
        h.agent("a_latecomer"),
      ]);
      for (const agent of [researcher, drafter]) {
        for (const stepId of ["research", "draft"])
          expect(await h.agentItem(agent, runId, stepId, "parallel-agents"), stepId).toBeDefined();
      }
      // Two agents claim the two branches at the same moment; a third racing for one of them loses.
      const [research, draft, raced] = await Promise.all([
        researcher.call("claim", { runId, stepId: "research", requestId: rid() }),
        drafter.call("claim", { runId, stepId: "draft", requestId: rid() }),
        latecomer.call("claim", { runId, stepId: "research", requestId: rid() }),
      ]);
      expect(draft.ok, JSON.stringify(draft)).toBe(true);
      const racers = [research, raced];
      const winners = racers.filter((c) => c.ok);
      expect(winners).toHaveLength(1);
      refused(racers.find((c) => !c.ok) as Data, "conflict", ["claimed_by_other"]);
      const researchWinner = research.ok ? researcher : latecomer;
      const researchToken = (winners[0] as Data).data.token;
      const draftToken = (draft as Data).data.token;
      expect(researchToken).not.toBe(draftToken);
      const during = await starter.ok("get_run", { runId });
      expect(statesOf(during)).toMatchObject({ research: "claimed", draft: "claimed" });

      const [afterResearch, afterDraft] = await Promise.all([
        researchWinner.ok("submit", {
          token: researchToken,
          output: { findings: "F1" },
          summary: "Researched.",
        }),
        drafter.ok("submit", { token: draftToken, output: { text: "Draft 1" }, summary: "Drafted." }),
      ]);
      const settled = await starter.ok("get_run", { runId });
      expect(statesOf(settled)).toMatchObject({
        split: "waiting",
        research: "done",
        draft: "done",
        draft_review: "waiting",
      });
      expect([afterResearch, afterDraft].every((v) => stateOf(v, "split") === "waiting")).toBe(true);

      // Rework inside the draft branch touches no sibling (parallel.md §3 Rework).
      const note = "Shorten the opening.";
      const reworked = await h.decided(editor, runId, "draft_review", "rejected", { note });
      expect(statesOf(reworked)).toMatchObject({
        split: "waiting",
        research: "done",
        draft: "ready",
        draft_review: null,
      });
      expect(reworked.data.steps.research).toMatchObject({ output: { findings: "F1" } });
      expect(reworked.data.steps.research.history).toEqual([]);
      const again = await h.claim(drafter, runId, "draft");
      // A fresh attempt (check.md §3: on_reject rework starts with an empty handoff); the note is run data.
      expect(again.handoff).toBeNull();
      expect(again.data.steps.draft_review.note).toBe(note);
      const redrafted = await drafter.ok("submit", {
        token: again.token,
        output: { text: "Draft 2" },
        summary: "Shortened.",
      });
      expect(redrafted.data.steps.draft.output).toEqual({ text: "Draft 2" });
      expect(redrafted.data.steps.draft.history).toMatchObject([{ output: { text: "Draft 1" } }]);
      expect(redrafted.data.steps.research).toEqual(reworked.data.steps.research);
      const joined = await h.decided(editor, runId, "draft_review", "approved");
      expect(statesOf(joined)).toMatchObject({ split: "done", merge: "ready" });
      const ended = await h.work(starter, runId, "merge", { merged: "F1 + Draft 2" });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "published" });
    });
  });
}
