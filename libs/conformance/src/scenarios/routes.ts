import { describe, expect, it } from "vitest";
import { type Data, type Harness, refused, rid, statesOf } from "../support.ts";

/**
 * How a run moves on (§3.2, §6 rule 1): the first step ready at start, `next` and route lists with a
 * reason, `on_reject`, an approval without one ending the run.
 */
export function routeScenarios(h: Harness): void {
  describe("§3.2 moving on: routes with a reason, on_reject, the end of a run", () => {
    it("[R1-0] spec example: approve → onboarded; reject → check_vendor ready again; decline route → declined (§2, §3.2)", async () => {
      const agent = await h.agent("a_screener");
      const finance = await h.person("fin@example.com", ["finance-approver"]);
      const file = await h.upload(agent, "OFAC: no match. EU: no match.", "screening.txt");
      const start = () =>
        agent.ok("start_run", {
          process: "supplier-onboarding",
          inputs: { vendorName: "Acme", amount: 48000 },
        });
      const screen = (runId: string, next: "approve" | "decline") =>
        h.work(
          agent,
          runId,
          "check_vendor",
          { cleared: next === "approve", summary: next === "approve" ? "No matches." : "OFAC hit." },
          {
            evidence: [{ kind: "file", ref: file.id }],
            next,
            reason: next === "approve" ? "Cleared on both lists." : "Sanctions hit.",
          },
        );

      const a = (await start()).run.id;
      await screen(a, "approve");
      const approved = await h.decided(finance, a, "approve", "approved");
      expect(approved.run).toMatchObject({
        state: "ended",
        outcome: "onboarded",
        ended: { by: "server", note: null },
      });

      const b = (await start()).run.id;
      await screen(b, "approve");
      const rejected = await h.decided(finance, b, "approve", "rejected", { note: "Spend not justified." });
      expect(statesOf(rejected)).toMatchObject({ check_vendor: "ready", approve: null });
      expect(rejected.run.state).toBe("active");

      const c = (await start()).run.id;
      const declined = await screen(c, "decline");
      expect(declined.run).toMatchObject({ state: "ended", outcome: "declined" });
      expect(statesOf(declined)).toEqual({
        check_vendor: "done",
        approve: null,
        decline: "done",
        done: null,
      });
    });

    it("[R1-1 #21 #23 #68 R2-B1] invoice-approval: route to cfo_review with a reason, approve, record → ended approved; a wrong-but-allowed tier is accepted (§3.2, §6 rule 3, §1)", async () => {
      const agent = await h.agent("a_ap");
      const cfo = await h.person("cfo@example.com", ["cfo"]);
      const inputs = {
        invoiceId: "INV-284",
        invoiceDocument: "https://erp.example.com/inv/284",
        manager: "mgr@example.com",
      };
      const started = await agent.ok("start_run", { process: "invoice-approval", inputs });
      expect(statesOf(started).validate).toBe("ready");
      const runId = started.run.id;
      const claim = await h.claim(agent, runId, "validate");
      expect(claim.step.next.map((r: { to: string }) => r.to)).toEqual([
        "manager_review",
        "finance_review",
        "cfo_review",
      ]);
      const routed = await agent.ok("submit", {
        token: claim.token,
        output: { totalUsd: 125000, supplier: "Acme", matchSummary: "PO and receipt match." },
        evidence: [{ kind: "link", ref: "https://erp.example.com/match/284" }],
        summary: "Matched PO-7 and GR-9; total 125000 USD including tax.",
        next: "cfo_review",
        reason: "125000 exceeds 100000",
      });
      expect(routed.workItems.map((w: Data) => w.stepId)).toEqual(["cfo_review"]);
      expect(routed.data.steps.validate).toMatchObject({
        next: "cfo_review",
        reason: "125000 exceeds 100000",
      });
      const approved = await h.decided(cfo, runId, "cfo_review", "approved");
      expect(statesOf(approved).record).toBe("ready");
      const ended = await h.work(
        agent,
        runId,
        "record",
        { approvalRecord: "ERP-APR-284" },
        {
          evidence: [{ kind: "link", ref: "https://erp.example.com/apr/284" }],
        },
      );
      expect(ended.run).toMatchObject({ state: "ended", outcome: "approved" });

      // The server does not check business rules: manager_review for 125000 is an allowed edge (§1 non-goal).
      const other = (await agent.ok("start_run", { process: "invoice-approval", inputs })).run.id;
      const wrongTier = await h.work(
        agent,
        other,
        "validate",
        { totalUsd: 125000, supplier: "Acme", matchSummary: "ok" },
        { evidence: [{ kind: "link", ref: "INV-285" }], next: "manager_review", reason: "Manager knows it." },
      );
      expect(wrongTier.workItems[0]).toMatchObject({
        stepId: "manager_review",
        assignedTo: { person: "mgr@example.com" },
      });
    });

    it("[R1-3 #9] support-escalation: route to tier1_handoff, two person tasks (one_of), confirm, close → ended resolved (§3.2, §2.3)", async () => {
      const agent = await h.agent("a_support");
      const tier1 = await h.person("t1@example.com", ["tier1-lead"]);
      const eng = await h.person("eng@example.com", ["engineering-oncall"]);
      const runId = (
        await agent.ok("start_run", { process: "support-escalation", inputs: { ticketId: "T-31" } })
      ).run.id;
      await h.work(
        agent,
        runId,
        "diagnose",
        { diagnosis: "Sync fails.", attemptedFixes: "Cleared cache." },
        {
          evidence: [{ kind: "link", ref: "https://support/T-31" }],
          next: "tier1_handoff",
          reason: "Not fixed by the runbook.",
        },
      );
      const wrong = await h.decide(tier1, runId, "tier1_handoff", "completed", {
        output: { reproduction: "Open app.", impact: "One user.", severity: "urgent" },
        evidence: [{ kind: "link", ref: "https://support/T-31#repro" }],
      });
      refused(wrong, "not_accepted", ['output.severity: "urgent" is not one of low, high, critical']);
      await h.decided(tier1, runId, "tier1_handoff", "completed", {
        output: { reproduction: "Open app.", impact: "One user.", severity: "high" },
        evidence: [{ kind: "link", ref: "https://support/T-31#repro" }],
      });
      await h.decided(eng, runId, "engineering", "completed", {
        output: { resolution: "Fixed sync token refresh.", issue: "ENG-9" },
        evidence: [{ kind: "link", ref: "https://deploys/42" }],
      });
      await h.decided(tier1, runId, "confirm", "approved");
      const ended = await h.work(
        agent,
        runId,
        "close_ticket",
        { ticket: "T-31" },
        {
          evidence: [{ kind: "link", ref: "https://support/T-31" }],
        },
      );
      expect(ended.run).toMatchObject({ state: "ended", outcome: "resolved" });
    });

    it("[R1-10] major-incident-response in core: after activate exactly one work item; the others are not reached and have no due yet (§3.2)", async () => {
      const agent = await h.agent("a_incident");
      const ops = await h.person("ops@example.com", ["operations-lead"]);
      const runId = (
        await ops.ok("start_run", {
          process: "major-incident-response",
          inputs: { incidentId: "INC-10", commander: "cmd@example.com" },
        })
      ).run.id;
      const after = await h.work(
        agent,
        runId,
        "activate",
        { bridge: "BR-10", pagingReceipt: "PG-10" },
        {
          evidence: [{ kind: "link", ref: "https://bridge/10" }],
        },
      );
      expect(after.workItems.map((w: Data) => w.stepId)).toEqual(["operations"]);
      expect(statesOf(after)).toEqual({
        activate: "done",
        operations: "waiting",
        security: null,
        communications: null,
        close_review: null,
        done: null,
      });
      const operations = after.steps.find((s: Data) => s.id === "operations");
      const due = Date.parse(operations.due) - Date.parse(after.run.updatedAt);
      expect(due).toBe(60 * 60 * 1000);
      for (const s of after.steps.filter((s: Data) => s.id !== "operations"))
        expect(s.due, `${s.id} has no due before it is ready`).toBeUndefined();
    });

    it("[R2-1 #23 R3-Q17 submit.not_accepted submit.invalid:arguments] invoice-approval: claim shows the routes; submit with next and reason → one work item; approved continues at record, rejected (no on_reject) ends the run rejected (§3.2, §3.5)", async () => {
      const agent = await h.agent("a_ap2");
      const cfo = await h.person("cfo2@example.com", ["cfo"]);
      const inputs = { invoiceId: "INV-410", invoiceDocument: "DMS-410", manager: "mgr@example.com" };
      const started = await agent.ok("start_run", {
        process: "invoice-approval",
        version: 1,
        inputs,
        mode: "live",
      });
      expect(started.run.state).toBe("active");
      const runId = started.run.id;
      const item = await h.agentItem(agent, runId, "validate", "invoice-approval");
      expect(item.claim).toEqual({
        tool: "claim",
        arguments: { runId, stepId: "validate", requestId: "<new UUID>" },
      });
      const claim = await agent.ok("claim", { runId, stepId: "validate", requestId: rid() });
      expect(claim.step.next).toEqual([
        { to: "manager_review" },
        { to: "finance_review" },
        { to: "cfo_review" },
      ]);
      const args = {
        token: claim.token,
        output: { totalUsd: 125000, supplier: "Acme", matchSummary: "Matched." },
        evidence: [{ kind: "link", ref: "INV-410" }],
        next: "cfo_review",
        reason: "Total above 100000.",
      };
      // The top-level summary is a required argument (tools.md submit): leaving it out breaks the
      // schema (invalid); a blank one is the acceptance issue "summary: missing".
      refused(await agent.write("submit", args), "invalid", ["summary: required"]);
      refused(await agent.write("submit", { ...args, summary: "" }), "not_accepted", ["summary: missing"]);
      const submitted = await agent.ok("submit", { ...args, summary: "Validated against PO-1." });
      expect(submitted.run.state).toBe("waiting");
      expect(submitted.workItems.map((w: Data) => w.stepId)).toEqual(["cfo_review"]);
      // The fixture's approval continues at `record` (the review's older file ended there; R1-1 runs it to the end).
      const approved = await h.decided(cfo, runId, "cfo_review", "approved");
      expect(approved.data.steps.cfo_review).toEqual({
        decision: "approved",
        by: "cfo2@example.com",
        at: expect.any(String),
        history: [],
      });
      expect(statesOf(approved)).toMatchObject({ cfo_review: "done", record: "ready" });
      expect(approved.run.state).toBe("active");

      const alt = (await agent.ok("start_run", { process: "invoice-approval", inputs })).run.id;
      await h.work(agent, alt, "validate", args.output, {
        evidence: args.evidence,
        next: "cfo_review",
        reason: "x",
      });
      const rejected = await h.decided(cfo, alt, "cfo_review", "rejected", { note: "Not budgeted." });
      expect(rejected.run).toMatchObject({
        state: "ended",
        outcome: "rejected",
        ended: { by: "cfo2@example.com", note: "Not budgeted." },
      });
      expect(rejected.data.steps.cfo_review).toMatchObject({ decision: "rejected", note: "Not budgeted." });
    });

    it("[#25 #27 decide.not_accepted submit.not_accepted] a person finishing an escalated step with a route list chooses next with a non-blank reason (§3.2, tools.md decide)", async () => {
      const agent = await h.agent("a_25");
      const ops = await h.operator("ops25@example.com");
      const runId = (
        await agent.ok("start_run", { process: "support-escalation", inputs: { ticketId: "T-25" } })
      ).run.id;
      const claim = await h.claim(agent, runId, "diagnose");
      const output = { diagnosis: "d", attemptedFixes: "f" };
      const evidence = [{ kind: "link", ref: "T-25" }];
      refused(
        await agent.write("submit", {
          token: claim.token,
          output,
          evidence,
          summary: "s",
          next: "confirm",
          reason: "  ",
        }),
        "not_accepted",
        ["reason: required"],
      );
      await agent.ok("escalate", { token: claim.token, note: "Need a human call." });
      refused(await h.decide(ops, runId, "diagnose", "completed", { output, evidence }), "not_accepted", [
        "next: required, one of confirm, tier1_handoff",
        "reason: required",
      ]);
      // The person's reason must be non-blank too, as the agent's.
      refused(
        await h.decide(ops, runId, "diagnose", "completed", {
          output,
          evidence,
          next: "tier1_handoff",
          reason: " \t ",
        }),
        "not_accepted",
        ["reason: required"],
      );
      const done = await h.decided(ops, runId, "diagnose", "completed", {
        output,
        evidence,
        next: "tier1_handoff",
        reason: "Needs reproduction.",
      });
      expect(done.data.steps.diagnose).toMatchObject({
        next: "tier1_handoff",
        reason: "Needs reproduction.",
        by: "ops25@example.com",
      });
      expect(statesOf(done)).toMatchObject({ diagnose: "done", tier1_handoff: "waiting", confirm: null });
    });
  });
}
