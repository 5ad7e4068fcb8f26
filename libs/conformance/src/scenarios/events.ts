import { describe, expect, it } from "vitest";
import { type Data, type Harness, refused, rid, statesOf } from "../support.ts";

/**
 * Events (§3.6, tools.md send_event): who may send, held per run, consumed oldest first by name, one
 * delivery per wait. The timed paths (time-outs racing events) are in `timed/`.
 */
export function eventScenarios(h: Harness): void {
  describe("§3.6 events: send_event, held events and waits", () => {
    it("[R1-9 #77] customer-offboarding: approval, a past wait_until, agents, an event, route lists, people → ended offboarded (§2.2, §3.6)", async () => {
      const owner = await h.person("acct@example.com", ["account-owner"]);
      const steward = await h.person("ds@example.com", ["data-steward"]);
      const agent = await h.agent("a_offboard");
      const billing = await h.agent("a_billing");
      const runId = (
        await owner.ok("start_run", {
          process: "customer-offboarding",
          inputs: { customerId: "CU-9", effectiveAt: "2026-01-31T00:00:00Z" },
        })
      ).run.id;
      const link = { evidence: [{ kind: "link", ref: "https://crm/CU-9" }] };
      const authorized = await h.decided(owner, runId, "authorize", "approved");
      expect(statesOf(authorized)).toMatchObject({ effective_time: "done", cancel_services: "ready" });
      await h.work(agent, runId, "cancel_services", { cancellationIds: ["CX-1"] }, link);
      const invoiced = await h.work(
        agent,
        runId,
        "final_invoice",
        { invoiceId: "INV-9", balance: 120.5, currency: "EUR" },
        {
          ...link,
          next: "settlement_event",
          reason: "Balance is open.",
        },
      );
      expect(statesOf(invoiced).settlement_event).toBe("waiting");
      expect(invoiced.run.state).toBe("waiting");
      const event = await billing.ok("send_event", {
        runId,
        name: "final-invoice-settled",
        data: { invoiceId: "INV-9" },
      });
      expect(event).toEqual({ consumedBy: "settlement_event" });
      await h.work(
        agent,
        runId,
        "verify_settlement",
        { ledgerSummary: "Paid in full." },
        {
          ...link,
          next: "deletion_clearance",
          reason: "Ledger shows settlement.",
        },
      );
      await h.decided(steward, runId, "deletion_clearance", "completed", {
        output: { deletionScope: "All CRM data", retentionExceptions: "Invoices, 10 years" },
        ...link,
      });
      await h.work(agent, runId, "delete_data", { deletionReceipts: ["DEL-1", "DEL-2"] }, link);
      const ended = await h.decided(steward, runId, "verify_deletion", "completed", {
        output: { completionStatement: "Deleted except retained invoices." },
        ...link,
      });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "offboarded" });
      expect(ended.data.steps.settlement_event).toMatchObject({
        output: { invoiceId: "INV-9" },
        by: "a_billing",
      });
    });

    it("[R2-9 #80 R2-B10 R3-Q15] customer-offboarding events: an early event is held ({consumedBy: null}) and consumed on readiness; two early events are consumed oldest first, the newer held for a later wait of its name until the run ends, when it is dropped unconsumed (§3.6)", async () => {
      const owner = await h.person("acct9@example.com", ["account-owner"]);
      const agent = await h.agent("a_offboard9");
      const billing = await h.agent("a_billing9");
      const ops = await h.operator();
      const toSettlement = async (events: Record<string, unknown>[]) => {
        const runId = (
          await owner.ok("start_run", {
            process: "customer-offboarding",
            inputs: { customerId: "CU-29", effectiveAt: "2026-01-01T00:00:00Z" },
          })
        ).run.id;
        for (const data of events) {
          expect(await billing.ok("send_event", { runId, name: "final-invoice-settled", data })).toEqual({
            consumedBy: null,
          });
        }
        const link = { evidence: [{ kind: "link", ref: "https://crm/CU-29" }] };
        await h.decided(owner, runId, "authorize", "approved");
        await h.work(agent, runId, "cancel_services", { cancellationIds: ["CX-9"] }, link);
        const view = await h.work(
          agent,
          runId,
          "final_invoice",
          { invoiceId: "INV-29", balance: 10, currency: "USD" },
          {
            ...link,
            next: "settlement_event",
            reason: "Open balance.",
          },
        );
        return { runId, view };
      };
      const { view } = await toSettlement([{ settlementRef: "SET-9" }]);
      expect(view.data.steps.settlement_event).toMatchObject({
        output: { settlementRef: "SET-9" },
        by: "a_billing9",
      });
      expect(statesOf(view)).toMatchObject({ settlement_event: "done", verify_settlement: "ready" });

      const fifo = await toSettlement([{ settlementRef: "SET-OLD" }, { settlementRef: "SET-CORRECTED" }]);
      expect(fifo.view.data.steps.settlement_event.output).toEqual({ settlementRef: "SET-OLD" });

      // The fixture has one wait of that name, so `held-events` shows the newer one held: after the first
      // wait took the older, the second wait of the same name, ready only later, consumes the newer.
      const held = (await owner.ok("start_run", { process: "held-events", inputs: {} })).run.id;
      for (const settlementRef of ["SET-OLD", "SET-CORRECTED"]) {
        const sent = await billing.ok("send_event", {
          runId: held,
          name: "settled",
          data: { settlementRef },
        });
        expect(sent).toEqual({ consumedBy: null });
      }
      const first = await h.work(agent, held, "prepare", {});
      expect(first.data.steps.first.output).toEqual({ settlementRef: "SET-OLD" });
      expect(statesOf(first)).toMatchObject({ first: "done", check: "ready", second: null });
      const second = await h.work(agent, held, "check", {});
      expect(second.data.steps.second).toMatchObject({
        output: { settlementRef: "SET-CORRECTED" },
        by: "a_billing9",
      });
      expect(statesOf(second)).toMatchObject({ second: "done", noted: "waiting" });

      // The run's end: in the offboarding run SET-CORRECTED is still held (no later wait of its name).
      // Held events are not run data, so the protocol shows their discarding only as this: the run ends
      // with the wait's output unchanged, nothing carries the held data, and no later write reaches the
      // run, so it can never be consumed.
      const cancelled = await ops.ok("cancel", { runId: fifo.runId, reason: "Test over." });
      expect(cancelled.run.state).toBe("cancelled");
      expect(cancelled.data.steps.settlement_event.output).toEqual({ settlementRef: "SET-OLD" });
      expect(JSON.stringify(cancelled)).not.toContain("SET-CORRECTED");
      refused(
        await billing.write("send_event", { runId: fifo.runId, name: "final-invoice-settled" }),
        "conflict",
        ["run_ended"],
      );
      expect(JSON.stringify(await owner.ok("get_run", { runId: fifo.runId }))).not.toContain("SET-CORRECTED");
    });

    it("[R3-3c R3-Q15 send_event.forbidden send_event.conflict:run_ended] events: two before readiness held, the first consumed, a third after consumption held; a replay returns the original; a person is forbidden; an ended run is run_ended (§3.6)", async () => {
      const agent = await h.agent("a_r3c3");
      const sender = await h.agent("a_sender");
      const reviewer = await h.person("rev3@example.com", ["reviewer"]);
      const person = await h.person("nobody3@example.com");
      const runId = (await reviewer.ok("start_run", { process: "event-review", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "prepare");
      const first = { runId, name: "proof_received", data: { delivery: 1 }, requestId: rid() };
      expect(await sender.ok("send_event", first)).toEqual({ consumedBy: null });
      expect(await sender.ok("send_event", { runId, name: "proof_received", data: { delivery: 2 } })).toEqual(
        { consumedBy: null },
      );
      const submitted = await agent.ok("submit", {
        token: claim.token,
        output: {},
        summary: "Asked for the proof.",
      });
      expect(submitted.data.steps.proof).toMatchObject({ output: { delivery: 1 }, by: "a_sender" });
      expect(statesOf(submitted)).toMatchObject({ proof: "done", review: "waiting" });
      expect(submitted.workItems.map((w: Data) => w.stepId)).toEqual(["review"]);
      expect(await sender.ok("send_event", { runId, name: "proof_received", data: { delivery: 3 } })).toEqual(
        { consumedBy: null },
      );
      // Held, not consumed: the wait keeps delivery 1 and the review is still open.
      const after = await reviewer.ok("get_run", { runId });
      expect(after.data.steps.proof.output).toEqual({ delivery: 1 });
      expect(statesOf(after)).toMatchObject({ proof: "done", review: "waiting" });
      refused(await person.write("send_event", { runId, name: "proof_received" }), "forbidden");
      const ended = await h.decided(reviewer, runId, "review", "approved");
      expect(ended.run.outcome).toBe("reviewed");
      refused(await sender.write("send_event", { runId, name: "proof_received" }), "conflict", ["run_ended"]);
      // A replay is told apart from a new delivery only where their answers differ: on the ended run a new
      // send_event is run_ended, while the replay of the first still returns its original result (§3.5, §4).
      expect(await sender.call("send_event", first)).toEqual({ ok: true, data: { consumedBy: null } });
    });

    it("[#78 #79 #80 #84 send_event.forbidden send_event.conflict:run_ended] events: agents and operators send, people may not; held per run, oldest first by name, one delivery per wait; consumedBy (§3.6; issue #4 deliver 5)", async () => {
      const sender = await h.agent("a_d5");
      const ops = await h.operator("ops_d5@example.com");
      const person = await h.person("p_d5@example.com");
      const starter = await h.person("st_d5@example.com");
      const a = (await starter.ok("start_run", { process: "two-waits", inputs: {} })).run.id;
      const b = (await starter.ok("start_run", { process: "two-waits", inputs: {} })).run.id;
      refused(await person.write("send_event", { runId: a, name: "ping" }), "forbidden");
      expect(await sender.ok("send_event", { runId: a, name: "ping", data: { n: 1 } })).toEqual({
        consumedBy: "first",
      });
      // Held per run: run b's waits are untouched by run a's events.
      expect(statesOf(await starter.ok("get_run", { runId: b }))).toMatchObject({
        first: "waiting",
        second: null,
      });
      // A name that matches no wait is held; another name never satisfies the wait.
      expect(await sender.ok("send_event", { runId: a, name: "pong" })).toEqual({ consumedBy: null });
      expect(statesOf(await starter.ok("get_run", { runId: a }))).toMatchObject({
        first: "done",
        second: "waiting",
      });
      expect(await ops.ok("send_event", { runId: a, name: "ping", data: { n: 2 } })).toEqual({
        consumedBy: "second",
      });
      const ended = await starter.ok("get_run", { runId: a });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "pinged" });
      expect(ended.data.steps.first).toMatchObject({ output: { n: 1 }, by: "a_d5" });
      expect(ended.data.steps.second).toMatchObject({ output: { n: 2 }, by: "ops_d5@example.com" });
      refused(await sender.write("send_event", { runId: a, name: "ping" }), "conflict", ["run_ended"]);
      refused(await sender.write("send_event", { runId: b, name: "Not A Name" }), "invalid");

      // Oldest first by name: before any wait is ready, settled n:1, noted n:2, settled n:3 are held. The
      // first `settled` wait takes n:1 (the oldest of its name, not the newer n:3); n:3 stays held though
      // the older noted n:2 is ahead of it, until the second `settled` wait takes it; the `noted` wait
      // then takes n:2.
      const c = (await starter.ok("start_run", { process: "held-events", inputs: {} })).run.id;
      for (const [name, n] of [
        ["settled", 1],
        ["noted", 2],
        ["settled", 3],
      ] as const) {
        expect(await sender.ok("send_event", { runId: c, name, data: { n } })).toEqual({ consumedBy: null });
      }
      const firstTaken = await h.work(sender, c, "prepare", {});
      expect(firstTaken.data.steps.first).toMatchObject({ output: { n: 1 }, by: "a_d5" });
      expect(statesOf(firstTaken)).toMatchObject({
        first: "done",
        check: "ready",
        second: null,
        noted: null,
      });
      const rest = await h.work(sender, c, "check", {});
      expect(rest.data.steps.second).toMatchObject({ output: { n: 3 }, by: "a_d5" });
      expect(rest.data.steps.noted).toMatchObject({ output: { n: 2 }, by: "a_d5" });
      expect(rest.run).toMatchObject({ state: "ended", outcome: "settled" });
    });

    it("[#81] the same business event sent twice with new requestIds is two deliveries (§3.6, §4)", async () => {
      const sender = await h.agent("a_81");
      const runId = (await sender.ok("start_run", { process: "two-waits", inputs: {} })).run.id;
      const data = { settlement: "SET-1" };
      expect(await sender.ok("send_event", { runId, name: "ping", data, requestId: rid() })).toEqual({
        consumedBy: "first",
      });
      expect(await sender.ok("send_event", { runId, name: "ping", data, requestId: rid() })).toEqual({
        consumedBy: "second",
      });
      const view: Data = await sender.ok("get_run", { runId });
      expect(view.run.outcome).toBe("pinged");
    });

    it("[send_event.not_found] send_event to a run that does not exist, or to another organization's run, is not_found and delivers nothing (§4.3)", async () => {
      const sender = await h.agent("a_nf");
      refused(await sender.write("send_event", { runId: "r_doesnotexist", name: "ping" }), "not_found");
      const runId = (await sender.ok("start_run", { process: "two-waits", inputs: {} })).run.id;
      const foreign = await h.agent("a_nf", "elsewhere");
      refused(await foreign.write("send_event", { runId, name: "ping" }), "not_found");
      expect(statesOf(await sender.ok("get_run", { runId }))).toMatchObject({
        first: "waiting",
        second: null,
      });
    });
  });
}
