import { describe, expect, it } from "vitest";
import type { Harness } from "../../support.ts";
import { DAY, HOUR, iso, MINUTE, rfc3339 } from "../../time.ts";
import { agentItem, claimStep, decideStep, doStep, link, personEntry, stepOf } from "../../walk.ts";
import { blogToApproval, LEASE_WHO, publish, WHO } from "./walks.ts";

/**
 * Deadlines (§2.2 `due`): the clock starts when a step becomes ready, a repeat restarts it, `returned`
 * does not; overdue work is marked in `get_run` and `get_work` and stays open.
 */
export function timedDueScenarios(h: Harness): void {
  describe("§2.2 due: deadlines and overdue work", () => {
    it("[#72 #73 #74 #75] blog-publication editor_review (due 2d): overdue once 2d pass, the item stays open and decidable; a repeat restarts the clock (C §2.2 due; checklist #72–#75)", async () => {
      const { agent, editor } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const t0 = await clock.now();
      const runId = await blogToApproval(h, rfc3339(t0 - DAY));
      let view = await agent.ok("get_run", { runId });
      expect(stepOf(view, "editor_review")).toMatchObject({ due: iso(t0 + 2 * DAY), overdue: false });

      await clock.advance(DAY);
      await decideStep(editor, runId, "editor_review", { decision: "rejected", note: "Shorter title." });
      await doStep(agent, runId, "draft", {
        output: { revision: "rev-2", title: "Launched", summary: "Shorter." },
        evidence: [link("https://cms.example.com/preview/rev-2")],
      });
      // The repeat is a fresh attempt: its clock starts when it becomes ready again (t0 + 1d).
      view = await agent.ok("get_run", { runId });
      expect(stepOf(view, "editor_review")).toMatchObject({ due: iso(t0 + 3 * DAY), overdue: false });

      await clock.advance(DAY + HOUR); // past the first attempt's deadline, not the repeat's
      view = await agent.ok("get_run", { runId });
      expect(stepOf(view, "editor_review")).toMatchObject({ state: "waiting", overdue: false });

      await clock.advance(DAY - HOUR);
      view = await agent.ok("get_run", { runId });
      expect(stepOf(view, "editor_review")).toMatchObject({
        state: "waiting",
        due: iso(t0 + 3 * DAY),
        overdue: true,
      });
      // The work stays open: still in the editor's inbox, and the decision still counts.
      const entry = await personEntry(editor, runId, "editor_review");
      expect(entry?.workItem).toMatchObject({
        due: iso(t0 + 3 * DAY),
        decide: { decisions: expect.any(Array) },
      });
      const approved = await decideStep(editor, runId, "editor_review", { decision: "approved" });
      expect(stepOf(approved, "publish").state).toBe("ready");
      await publish(h, runId);
    });

    it("[R1-10 #72 R3-Q13] major-incident-response (core only): one work item at a time, and each later step's due clock starts when it becomes ready (checklist #72)", async () => {
      const { agent, leads } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const t0 = await clock.now();
      const started = await agent.ok("start_run", {
        process: "major-incident-response",
        inputs: { incidentId: "INC-42", commander: "commander@example.org" },
      });
      const runId = started.run.id as string;
      const activated = await doStep(agent, runId, "activate", {
        output: { bridge: "BRIDGE-42", pagingReceipt: "PAGE-42" },
        evidence: [link("https://status.example.com/inc-42")],
      });
      expect(activated.workItems.map((w: { stepId: string }) => w.stepId)).toEqual(["operations"]);
      expect(activated.workItems[0].due).toBe(iso(t0 + HOUR));
      expect(stepOf(activated, "security").state).toBeNull();

      await clock.advance(2 * HOUR);
      expect(stepOf(await leads.ok("get_run", { runId }), "operations")).toMatchObject({ overdue: true });
      const next = await decideStep(leads, runId, "operations", {
        decision: "completed",
        output: { recoverySummary: "Service restored." },
        evidence: [link("https://status.example.com/inc-42/timeline")],
      });
      expect(next.workItems.map((w: { stepId: string }) => w.stepId)).toEqual(["security"]);
      expect(next.workItems[0].due).toBe(iso(t0 + 3 * HOUR));
      expect(stepOf(next, "security")).toMatchObject({ due: iso(t0 + 3 * HOUR), overdue: false });
    });

    it("[#73 #74 #75] due on an agent step: overdue shows in get_work and get_run once it passes; an escalation returned by a person does not restart the clock (C §2.2 due, §3.4 returned; checklist #73)", async () => {
      const { agent, operator } = await h.sessionsOf(LEASE_WHO);
      const clock = h.clock;
      const t0 = await clock.now();
      const started = await agent.ok("start_run", { process: "due-agent", inputs: {} });
      const runId = started.run.id as string;
      expect(stepOf(started, "triage")).toEqual({
        id: "triage",
        kind: "agent",
        state: "ready",
        due: iso(t0 + HOUR),
        overdue: false,
      });
      expect(await agentItem(agent, runId, "triage")).toMatchObject({ due: iso(t0 + HOUR), overdue: false });

      const claim = await claimStep(agent, runId, "triage");
      await clock.advance(5 * MINUTE);
      const escalated = await agent.ok("escalate", {
        token: claim.token,
        note: "The request has no intake form.",
      });
      expect(escalated.workItems[0]).toMatchObject({ stepId: "triage", due: iso(t0 + HOUR) });
      const returned = await decideStep(operator, runId, "triage", {
        decision: "returned",
        note: "Use the intake form attached to the ticket.",
      });
      expect(stepOf(returned, "triage")).toMatchObject({
        state: "ready",
        due: iso(t0 + HOUR),
        overdue: false,
      });
      expect(await agentItem(agent, runId, "triage")).toMatchObject({
        due: iso(t0 + HOUR),
        overdue: false,
        handoff: { returned: { note: "Use the intake form attached to the ticket.", by: "ops@example.com" } },
      });

      await clock.advance(54 * MINUTE);
      expect(await agentItem(agent, runId, "triage")).toMatchObject({ due: iso(t0 + HOUR), overdue: false });
      await clock.advance(MINUTE);
      expect(await agentItem(agent, runId, "triage")).toMatchObject({ due: iso(t0 + HOUR), overdue: true });
      expect(stepOf(await agent.ok("get_run", { runId }), "triage")).toMatchObject({
        state: "ready",
        overdue: true,
      });
      // Overdue work stays open: still claimable and completable.
      const done = await doStep(agent, runId, "triage", { output: { verdict: "bug" } });
      expect(stepOf(done, "triage").state).toBe("done");
      expect(stepOf(done, "review").state).toBe("waiting");
    });

    it("[#73] due on an agent step restarts when the step is repeated through on_reject (C §2.2 due: a repeat restarts the clock; checklist #73)", async () => {
      const { agent, lead } = await h.sessionsOf(LEASE_WHO);
      const clock = h.clock;
      const t0 = await clock.now();
      const started = await agent.ok("start_run", { process: "due-agent", inputs: {} });
      const runId = started.run.id as string;
      await doStep(agent, runId, "triage", { output: { verdict: "question" } });
      await clock.advance(2 * HOUR);
      const rejected = await decideStep(lead, runId, "review", {
        decision: "rejected",
        note: "It is a bug.",
      });
      expect(stepOf(rejected, "triage")).toMatchObject({
        state: "ready",
        due: iso(t0 + 3 * HOUR),
        overdue: false,
      });
      expect(await agentItem(agent, runId, "triage")).toMatchObject({
        due: iso(t0 + 3 * HOUR),
        overdue: false,
      });
      await clock.advance(HOUR);
      expect(await agentItem(agent, runId, "triage")).toMatchObject({ overdue: true });
    });

    it("[R2-8 #54 #75 R2-B9] incident-postmortem: a rejected review comes back with a restarted due; track_closure (due 30d) turns overdue and stays open and completable (C §2.2 due; checklist #54, #75)", async () => {
      const { agent, incidentOwner } = await h.sessionsOf(LEASE_WHO);
      const clock = h.clock;
      const t0 = await clock.now();
      const started = await incidentOwner.ok("start_run", {
        process: "incident-postmortem",
        inputs: { incidentId: "INC-8", incidentOwner: "owner@example.com" },
      });
      const runId = started.run.id as string;
      const report = {
        output: {
          report: "Timeline, impact and factors.",
          proposedActions: [{ action: "Add alerting", owner: "ana@example.com", due: "2026-11-01" }],
        },
        evidence: [link("https://wiki.example.com/inc-8")],
      };
      const drafted = await doStep(agent, runId, "draft", report);
      expect(stepOf(drafted, "review")).toMatchObject({
        state: "waiting",
        due: iso(t0 + 5 * DAY),
        overdue: false,
      });

      await clock.advance(4 * DAY);
      const rejected = await decideStep(incidentOwner, runId, "review", {
        decision: "rejected",
        note: "Each action needs a completion criterion.",
      });
      expect(rejected.workItems).toEqual([]);
      await doStep(agent, runId, "draft", report);
      let view = await incidentOwner.ok("get_run", { runId });
      expect(view.workItems).toHaveLength(1);
      expect(view.workItems[0]).toMatchObject({ stepId: "review", due: iso(t0 + 9 * DAY) });
      await clock.advance(2 * DAY); // past the first review's deadline, not the repeat's
      view = await incidentOwner.ok("get_run", { runId });
      expect(stepOf(view, "review")).toMatchObject({ due: iso(t0 + 9 * DAY), overdue: false });

      await decideStep(incidentOwner, runId, "review", { decision: "approved" });
      const registered = await doStep(agent, runId, "register_actions", {
        output: { actionIds: ["ACT-1"], trackerView: "https://tracker.example.com/inc-8" },
        evidence: [link("https://tracker.example.com/inc-8")],
      });
      const t1 = t0 + 6 * DAY;
      expect(stepOf(registered, "track_closure")).toMatchObject({ due: iso(t1 + 30 * DAY), overdue: false });

      await clock.advance(30 * DAY);
      view = await incidentOwner.ok("get_run", { runId });
      expect(stepOf(view, "track_closure")).toMatchObject({ state: "waiting", overdue: true });
      expect(view.run.state).toBe("waiting");
      expect((await personEntry(incidentOwner, runId, "track_closure"))?.workItem.due).toBe(
        iso(t1 + 30 * DAY),
      );
      const closed = await decideStep(incidentOwner, runId, "track_closure", {
        decision: "completed",
        output: {
          closures: [{ actionId: "ACT-1", issue: "OPS-1", evidence: "https://tracker.example.com/ops-1" }],
          closureSummary: "The one action is closed with evidence.",
        },
        evidence: [link("https://tracker.example.com/inc-8")],
      });
      expect(closed.run).toMatchObject({ state: "ended", outcome: "closed" });
    });
  });
}
