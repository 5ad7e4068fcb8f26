import { describe, expect, it } from "vitest";
import type { Harness } from "../../support.ts";
import { DAY, HOUR, iso, MINUTE, rfc3339 } from "../../time.ts";
import { agentItem, claimStep, decideStep, doStep, link, personEntry, stepOf } from "../../walk.ts";
import {
  blogToApproval,
  cancelAndInvoice,
  offboardingTail,
  offboardingToInvoice,
  publish,
  settled,
  WHO,
} from "./walks.ts";

/**
 * Waits against a moving clock (§2.2 `wait`, `wait_until`; §2.4): past, future and missing times,
 * each duration unit, `0m`, and a write that returns only after the waits it reached were applied.
 */
export function timedWaitScenarios(h: Harness): void {
  describe("§2.2 waits in time: wait, wait_until (§2.4 durations)", () => {
    it("[R1-7 #76 R3-Q1] blog-publication: a rejection returns to draft with the note current; a publishAt already past continues at once (C §3.1, §2.2 wait_until)", async () => {
      const { agent, editor } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const now = await clock.now();
      const runId = await blogToApproval(h, rfc3339(now - HOUR));
      const rejected = await decideStep(editor, runId, "editor_review", {
        decision: "rejected",
        note: "Cite the benchmark source.",
      });
      expect(stepOf(rejected, "draft").state).toBe("ready");
      expect(rejected.data.steps.editor_review).toMatchObject({
        decision: "rejected",
        note: "Cite the benchmark source.",
        by: "eda@example.com",
      });
      const again = await claimStep(agent, runId, "draft");
      expect(again.data.steps.editor_review.note).toBe("Cite the benchmark source.");
      expect(again.handoff).toBeNull();
      await agent.ok("submit", {
        token: again.token,
        output: { revision: "rev-2", title: "We launched", summary: "Sources cited." },
        evidence: [link("https://cms.example.com/preview/rev-2")],
        summary: "Added the benchmark source.",
      });
      const approved = await decideStep(editor, runId, "editor_review", { decision: "approved" });
      // The wait_until already passed: the approval's own write shows the wait done and publish ready.
      expect(stepOf(approved, "publication_time").state).toBe("done");
      expect(approved.data.steps.publication_time).toEqual({ by: "server", at: iso(now), history: [] });
      expect(stepOf(approved, "publish").state).toBe("ready");
      expect(approved.run.state).toBe("active");
      await publish(h, runId);
    });

    it("blog-publication: a publishAt in the future waits until the clock reaches it, then publish is ready at exactly that time (C §2.2 wait_until)", async () => {
      const { agent, editor } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const now = await clock.now();
      const publishAt = now + 3 * DAY;
      const runId = await blogToApproval(h, rfc3339(publishAt, "+05:30"));
      const approved = await decideStep(editor, runId, "editor_review", { decision: "approved" });
      expect(stepOf(approved, "publication_time").state).toBe("waiting");
      expect(stepOf(approved, "publish").state).toBeNull();
      expect(approved.run.state).toBe("waiting");

      await clock.advance(3 * DAY - MINUTE);
      expect(stepOf(await agent.ok("get_run", { runId }), "publication_time").state).toBe("waiting");
      expect(await agentItem(agent, runId, "publish")).toBeUndefined();

      await clock.advance(MINUTE);
      const view = await agent.ok("get_run", { runId });
      expect(stepOf(view, "publication_time").state).toBe("done");
      expect(view.data.steps.publication_time).toEqual({ by: "server", at: iso(publishAt), history: [] });
      expect(view.run.state).toBe("active");
      const item = await agentItem(agent, runId, "publish");
      expect(item).toMatchObject({ readySince: iso(publishAt), due: null, overdue: false });
      await publish(h, runId);
    });

    it("customer-offboarding: an effectiveAt in the future waits for it; an event after the wait is ready is consumed at once (C §2.2 wait_until, §3.6, tools.md send_event)", async () => {
      const { agent, owner } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const now = await clock.now();
      const effectiveAt = now + 2 * DAY;
      const { runId, authorized } = await offboardingToInvoice(h, effectiveAt);
      expect(stepOf(authorized, "effective_time").state).toBe("waiting");
      expect(authorized.run.state).toBe("waiting");

      await clock.advance(DAY);
      expect(stepOf(await owner.ok("get_run", { runId }), "effective_time").state).toBe("waiting");
      await clock.advance(DAY);
      const view = await owner.ok("get_run", { runId });
      expect(view.data.steps.effective_time).toEqual({ by: "server", at: iso(effectiveAt), history: [] });
      expect(stepOf(view, "cancel_services").state).toBe("ready");

      const invoiced = await cancelAndInvoice(h, runId, "settlement_event");
      expect(stepOf(invoiced, "settlement_event").state).toBe("waiting");
      expect(await settled(h, runId, { invoiceId: "INV-9" })).toEqual({
        ok: true,
        data: { consumedBy: "settlement_event" },
      });
      const after = await owner.ok("get_run", { runId });
      expect(after.data.steps.settlement_event).toMatchObject({
        output: { invoiceId: "INV-9" },
        by: "a_billing",
      });
      await doStep(agent, runId, "verify_settlement", {
        output: { ledgerSummary: "Settled." },
        evidence: [link("https://ledger.example.com/inv-9")],
        next: "deletion_clearance",
        reason: "Settled in the ledger.",
      });
      await offboardingTail(h, runId);
    });

    it("[R2-2] step 3, employee onboarding (the review's process): after startAt (a datetime with an offset) the manager's item appears, assigned to that person, and the run ends onboarded (C §2.2 wait_until, §3.4)", async () => {
      const { hr, it_, manager } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const startAt = (await clock.now()) + 2 * DAY;
      const started = await hr.ok("start_run", {
        process: "r2-employee-onboarding",
        inputs: {
          employeeRef: "EMP-27",
          manager: "manager@example.com",
          startAt: rfc3339(startAt, "+05:30"),
          startDate: "2026-10-07",
        },
      });
      const runId = started.run.id as string;
      expect(started.run.state).toBe("waiting");
      await decideStep(hr, runId, "hr", {
        decision: "completed",
        output: { recordRef: "HR-27", checksComplete: true },
        evidence: [link("HR-27")],
      });
      const prepared = await decideStep(it_, runId, "it", {
        decision: "completed",
        output: { ticketRef: "IT-27" },
        evidence: [link("IT-27")],
      });
      expect(stepOf(prepared, "first_day").state).toBe("waiting");
      expect(prepared.run.state).toBe("waiting");
      expect(prepared.workItems).toEqual([]);
      expect(await personEntry(manager, runId, "manager")).toBeUndefined();

      await clock.advance(2 * DAY);
      const entry = await personEntry(manager, runId, "manager");
      expect(entry?.workItem.assignedTo).toEqual({ person: "manager@example.com" });
      const done = await decideStep(manager, runId, "manager", {
        decision: "completed",
        output: { checklistRef: "ONBOARD-27" },
        evidence: [link("ONBOARD-27")],
      });
      expect(done.run).toMatchObject({ state: "ended", outcome: "onboarded" });
      expect(done.data.steps.first_day).toEqual({ by: "server", at: iso(startAt), history: [] });
    });

    it("[#71] wait 30m, 4h and 3d each continue after their duration; one advance across several waits applies them all, each at its own time (C §2.2 wait, §2.4)", async () => {
      const { agent } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const t0 = await clock.now();
      const started = await agent.ok("start_run", { process: "timed-waits", inputs: {} });
      const runId = started.run.id as string;
      expect(stepOf(started, "half_hour").state).toBe("waiting");
      expect(started.run.state).toBe("waiting");

      await clock.advance(29 * MINUTE);
      expect(stepOf(await agent.ok("get_run", { runId }), "half_hour").state).toBe("waiting");
      await clock.advance(MINUTE);
      let view = await agent.ok("get_run", { runId });
      expect(view.data.steps.half_hour).toEqual({ by: "server", at: iso(t0 + 30 * MINUTE), history: [] });
      expect(stepOf(view, "four_hours").state).toBe("waiting");

      // One advance reaches both remaining waits: `baton clock advance` returns after the cascade.
      await clock.advance(4 * HOUR + 3 * DAY);
      view = await agent.ok("get_run", { runId });
      expect(view.data.steps.four_hours).toEqual({
        by: "server",
        at: iso(t0 + 30 * MINUTE + 4 * HOUR),
        history: [],
      });
      expect(view.data.steps.three_days).toEqual({
        by: "server",
        at: iso(t0 + 30 * MINUTE + 4 * HOUR + 3 * DAY),
        history: [],
      });
      expect(view.run.state).toBe("active");
      expect(await agentItem(agent, runId, "work")).toMatchObject({
        readySince: iso(t0 + 30 * MINUTE + 4 * HOUR + 3 * DAY),
      });
    });

    it("[#76] wait_until on a missing value fails the step with by: server and a note, ending the run failed (C §2.2, §3.5; checklist #76)", async () => {
      const { agent } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const now = await clock.now();
      const started = await agent.ok("start_run", { process: "wait-until-optional", inputs: {} });
      expect(started.run).toMatchObject({ state: "ended", outcome: "failed" });
      expect(stepOf(started, "hold").state).toBe("failed");
      expect(stepOf(started, "work").state).toBeNull();
      const record = started.data.steps.hold;
      expect(record).toMatchObject({ decision: "failed", by: "server", at: iso(now) });
      expect(typeof record.note).toBe("string");
      expect(record.note.length).toBeGreaterThan(0);
      expect(started.run.ended).toEqual({ by: "server", at: iso(now), note: record.note });

      // The same process with the time present and already past continues at once.
      const past = await agent.ok("start_run", {
        process: "wait-until-optional",
        inputs: { notBefore: rfc3339(now - MINUTE, "-04:00") },
      });
      expect(stepOf(past, "hold").state).toBe("done");
      expect(stepOf(past, "work").state).toBe("ready");
    });

    it("issue #8 case: a wait_until on an instant with sub-millisecond digits (…00.9565Z) is still waiting when the clock reads …00.956Z, and ends at …00.957Z, never before its instant (C §2.2 wait_until)", async () => {
      const { agent } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const now = await clock.now();
      // A minute ahead, on a …956 millisecond, written with a fourth fraction digit.
      const ms = Math.floor((now + MINUTE) / 1000) * 1000 + 956;
      const notBefore = iso(ms).replace(/Z$/, "5Z");
      expect(notBefore).toMatch(/\.9565Z$/);
      const started = await agent.ok("start_run", { process: "wait-until-optional", inputs: { notBefore } });
      const runId = started.run.id as string;
      expect(stepOf(started, "hold").state).toBe("waiting");

      expect(await clock.advance(ms - now)).toBe(ms);
      const at956 = await agent.ok("get_run", { runId });
      expect(stepOf(at956, "hold").state).toBe("waiting");
      expect(stepOf(at956, "work").state).toBeNull();
      expect(await agentItem(agent, runId, "work")).toBeUndefined();

      await clock.advance(1);
      const at957 = await agent.ok("get_run", { runId });
      expect(at957.data.steps.hold).toEqual({ by: "server", at: iso(ms + 1), history: [] });
      expect(await agentItem(agent, runId, "work")).toMatchObject({ readySince: iso(ms + 1) });
    });

    it("[#71 R3-Q1 W5] a wait of 0m continues within the write that reaches it (§4, §2.4; libs/process: 0m means at once)", async () => {
      const { agent } = await h.sessionsOf(WHO);
      const started = await agent.ok("start_run", { process: "zero-wait", inputs: {} });
      expect(stepOf(started, "pause").state).toBe("done");
      expect(stepOf(started, "work").state).toBe("ready");
    });
  });
}
