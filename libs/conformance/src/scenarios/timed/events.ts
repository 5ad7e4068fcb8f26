import { describe, expect, it } from "vitest";
import type { Harness } from "../../support.ts";
import { DAY, HOUR, iso, MINUTE, rfc3339 } from "../../time.ts";
import { decideStep, doStep, link, personEntry, stepOf } from "../../walk.ts";
import { cancelAndInvoice, offboardingTail, offboardingToInvoice, settled, WHO } from "./walks.ts";

/**
 * Events against a moving clock (§3.6, §2.2 `wait_for` with `timeout` and `on_timeout`): held events
 * consumed when a wait becomes ready, time-outs to `on_timeout` or `next`, and an event racing its
 * time-out (the earlier wins).
 */
export function timedEventScenarios(h: Harness): void {
  describe("§3.6 events in time: held events, wait_for time-outs and races", () => {
    it("[R1-9 #77] customer-offboarding: an effectiveAt already past continues at once; an early event is held and consumed when settlement_event becomes ready; the run ends offboarded (C §2.2, §3.6)", async () => {
      const { agent } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const now = await clock.now();
      const { runId, authorized } = await offboardingToInvoice(h, now - DAY);
      expect(stepOf(authorized, "effective_time").state).toBe("done");
      expect(authorized.data.steps.effective_time).toMatchObject({ by: "server", at: iso(now) });
      expect(stepOf(authorized, "cancel_services").state).toBe("ready");

      const early = await settled(h, runId, { invoiceId: "INV-9", paidAt: "2026-10-07" });
      expect(early).toEqual({ ok: true, data: { consumedBy: null } });

      const invoiced = await cancelAndInvoice(h, runId, "settlement_event");
      expect(stepOf(invoiced, "settlement_event").state).toBe("done");
      expect(invoiced.data.steps.settlement_event).toMatchObject({
        output: { invoiceId: "INV-9", paidAt: "2026-10-07" },
        by: "a_billing",
      });
      expect(stepOf(invoiced, "verify_settlement").state).toBe("ready");

      await doStep(agent, runId, "verify_settlement", {
        output: { ledgerSummary: "INV-9 settled in full." },
        evidence: [link("https://ledger.example.com/inv-9")],
        next: "deletion_clearance",
        reason: "The ledger shows INV-9 settled.",
      });
      await offboardingTail(h, runId);
    });

    it("[#82 #83 W5] customer-offboarding: with no event for 30d settlement_event times out to on_timeout finance_followup; an event at the time-out instant is too late and is held (C §2.2 timeout/on_timeout; checklist #82, #83)", async () => {
      const { owner, collections } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const { runId } = await offboardingToInvoice(h, (await clock.now()) - HOUR);
      await cancelAndInvoice(h, runId, "settlement_event");
      const waitingSince = await clock.now();

      await clock.advance(30 * DAY - MINUTE);
      let view = await owner.ok("get_run", { runId });
      expect(stepOf(view, "settlement_event").state).toBe("waiting");
      expect(stepOf(view, "finance_followup").state).toBeNull();

      await clock.advance(MINUTE);
      view = await owner.ok("get_run", { runId });
      expect(stepOf(view, "settlement_event").state).toBe("done");
      expect(view.data.steps.settlement_event).toEqual({
        by: "server",
        at: iso(waitingSince + 30 * DAY),
        history: [],
      });
      expect(stepOf(view, "verify_settlement").state).toBeNull();
      expect(view.workItems.map((w: { stepId: string }) => w.stepId)).toEqual(["finance_followup"]);
      expect((await personEntry(collections, runId, "finance_followup"))?.workItem.assignedTo).toEqual({
        group: "collections",
      });

      // The time-out happened first: a late event is held (no wait is ready), not consumed.
      expect(await settled(h, runId, { invoiceId: "INV-9" })).toEqual({
        ok: true,
        data: { consumedBy: null },
      });

      await decideStep(collections, runId, "finance_followup", {
        decision: "completed",
        output: { settlementReference: "WO-9" },
        evidence: [link("https://ledger.example.com/wo-9")],
      });
      await offboardingTail(h, runId);
    });

    it("[#83 W5] customer-offboarding: an event a minute before the time-out wins the race, and the time-out never fires afterwards (checklist #83)", async () => {
      const { owner } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const { runId } = await offboardingToInvoice(h, (await clock.now()) - HOUR);
      await cancelAndInvoice(h, runId, "settlement_event");
      await clock.advance(30 * DAY - MINUTE);
      expect(await settled(h, runId, { invoiceId: "INV-9" })).toEqual({
        ok: true,
        data: { consumedBy: "settlement_event" },
      });
      await clock.advance(2 * MINUTE);
      const view = await owner.ok("get_run", { runId });
      expect(view.data.steps.settlement_event).toMatchObject({
        output: { invoiceId: "INV-9" },
        by: "a_billing",
      });
      expect(stepOf(view, "verify_settlement").state).toBe("ready");
      expect(stepOf(view, "finance_followup").state).toBeNull();
      expect(view.workItems).toEqual([]);
    });

    it("[R2-9 #11] customer offboarding (the review's process): an early event is consumed on approval, two early events are consumed oldest first, and 3d without one times out to resolve_settlement (C §3.6, §2.2)", async () => {
      const { agent, billing, finance, receivables } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const deleteAt = (await clock.now()) + 10 * DAY;
      const nullNote = await agent.call("start_run", {
        process: "r2-customer-offboarding",
        inputs: { customerRef: "CUS-9", deleteAt: rfc3339(deleteAt), retentionNote: null },
        requestId: crypto.randomUUID(),
      });
      expect(nullNote.ok ? null : nullNote.error.code).toBe("invalid");

      const toFinance = async (deleteBy: number) => {
        const started = await agent.ok("start_run", {
          process: "r2-customer-offboarding",
          inputs: { customerRef: "CUS-9", deleteAt: rfc3339(deleteBy) },
        });
        const runId = started.run.id as string;
        await doStep(agent, runId, "cancel_services", {
          output: { cancellationRef: "CANCEL-9", invoiceRef: "FINAL-9" },
          evidence: [link("CANCEL-9"), link("FINAL-9")],
        });
        return runId;
      };
      const event = (runId: string, settlementRef: string) =>
        billing.ok("send_event", { runId, name: "final_settlement", data: { settlementRef } });

      // Steps 1–2: held before the wait is ready, consumed when finance approves.
      const r9 = await toFinance(deleteAt);
      expect(await event(r9, "SET-9")).toEqual({ consumedBy: null });
      const approved = await decideStep(finance, r9, "finance", { decision: "approved" });
      expect(stepOf(approved, "settlement").state).toBe("done");
      expect(approved.data.steps.settlement).toMatchObject({
        output: { settlementRef: "SET-9" },
        by: "a_billing",
      });
      expect(stepOf(approved, "retention").state).toBe("waiting");
      await clock.advance(deleteAt - (await clock.now()));
      const deleted = await doStep(agent, r9, "delete_data", {
        output: { deletionReportRef: "DELETE-9" },
        evidence: [link("DELETE-9")],
      });
      expect(deleted.run).toMatchObject({ state: "ended", outcome: "offboarded" });

      // Step 3: two events before readiness → FIFO.
      const later = (await clock.now()) + 10 * DAY;
      const started = await agent.ok("start_run", {
        process: "r2-customer-offboarding",
        inputs: { customerRef: "CUS-10", deleteAt: rfc3339(later), retentionNote: "Legal hold on tickets" },
      });
      const r10 = started.run.id as string;
      await doStep(agent, r10, "cancel_services", {
        output: { cancellationRef: "CANCEL-10", invoiceRef: "FINAL-10" },
        evidence: [link("CANCEL-10")],
      });
      expect(await event(r10, "SET-OLD")).toEqual({ consumedBy: null });
      expect(await event(r10, "SET-CORRECTED")).toEqual({ consumedBy: null });
      const fifo = await decideStep(finance, r10, "finance", { decision: "approved" });
      expect(fifo.data.steps.settlement.output).toEqual({ settlementRef: "SET-OLD" });

      // Step 4: no event for 3d → resolve_settlement.
      const r11 = await toFinance((await clock.now()) + 10 * DAY);
      await decideStep(finance, r11, "finance", { decision: "approved" });
      await clock.advance(3 * DAY - MINUTE);
      expect(stepOf(await agent.ok("get_run", { runId: r11 }), "settlement").state).toBe("waiting");
      await clock.advance(MINUTE);
      const timedOut = await agent.ok("get_run", { runId: r11 });
      expect(stepOf(timedOut, "settlement").state).toBe("done");
      expect(timedOut.data.steps.settlement).toMatchObject({ by: "server" });
      expect(timedOut.data.steps.settlement.output).toBeUndefined();
      expect(timedOut.workItems.map((w: { stepId: string }) => w.stepId)).toEqual(["resolve_settlement"]);
      const resolved = await decideStep(receivables, r11, "resolve_settlement", {
        decision: "completed",
        output: { settlementRef: "WRITE-OFF-11" },
        evidence: [link("WRITE-OFF-11")],
      });
      expect(stepOf(resolved, "retention").state).toBe("waiting");
    });

    it("[#82] wait_for with a timeout and no on_timeout continues at the step's next when it passes (C §2.2; checklist #82)", async () => {
      const { agent } = await h.sessionsOf(WHO);
      const clock = h.clock;
      const t0 = await clock.now();
      const started = await agent.ok("start_run", { process: "wait-for-default", inputs: {} });
      const runId = started.run.id as string;
      expect(stepOf(started, "ping").state).toBe("waiting");
      await clock.advance(HOUR);
      const view = await agent.ok("get_run", { runId });
      expect(view.data.steps.ping).toEqual({ by: "server", at: iso(t0 + HOUR), history: [] });
      expect(stepOf(view, "after").state).toBe("ready");
    });
  });
}
