import { describe, expect, it } from "vitest";
import type { McpSession } from "../support/mcp.ts";
import { type Data, type Harness, refused, rid, statesOf } from "./support.ts";

/**
 * Checklist round 1: the reviewer's walkthroughs of the fixtures (revision 1), replayed against the
 * current text. Inputs follow the published fixtures (`conformance/fixtures/<name>`); where the
 * checklist restates older inputs, the fixture's own fields are used and the test says so.
 */
export function round1Scenarios(h: Harness): void {
  describe("checklist round 1", () => {
    it("R1-0 spec example: approve → onboarded; reject → check_vendor ready again; decline route → declined (§2, §3.2)", async () => {
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

    it("R1-1 invoice-approval: route to cfo_review with a reason, approve, record → ended approved; a wrong-but-allowed tier is accepted (§3.2, §6 rule 3, §1)", async () => {
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

    it("R1-2 employee-onboarding: three person tasks, an agent, an approval; a rejection moves it_setup and welcome to history (§3.1, §3.4)", async () => {
      const hr = await h.person("hr@example.com", ["hr-operations"]);
      const manager = await h.person("hm@example.com");
      const it_ = await h.person("it@example.com", ["it-operations"]);
      const agent = await h.agent("a_welcome");
      const started = await hr.ok("start_run", {
        process: "employee-onboarding",
        inputs: {
          employeeId: "E-7",
          employeeName: "Kim",
          startDate: "2026-11-02",
          hiringManager: "hm@example.com",
        },
      });
      const runId = started.run.id;
      expect(started.workItems[0]).toMatchObject({
        stepId: "hr_setup",
        assignedTo: { group: "hr-operations" },
      });
      await h.decided(hr, runId, "hr_setup", "completed", {
        output: { hrisRecord: "HR-7", location: "Berlin", jobTitle: "Engineer" },
        evidence: [{ kind: "link", ref: "https://hris.example.com/7" }],
      });
      const plan = await h.workItem(manager, runId, "access_plan");
      expect(plan.assignedTo).toEqual({ person: "hm@example.com" });
      await h.decided(manager, runId, "access_plan", "completed", {
        output: { accessRequests: ["crm", "wiki"], equipment: "Laptop", buddy: "bo@example.com" },
      });
      await h.decided(it_, runId, "it_setup", "completed", {
        output: { assetTag: "LT-7", accounts: ["crm"], handoverPlan: "Desk 4, day one." },
        evidence: [{ kind: "link", ref: "https://it.example.com/t/7" }],
      });
      await h.work(
        agent,
        runId,
        "welcome",
        { checklist: "CL-7" },
        { evidence: [{ kind: "link", ref: "https://wiki/cl-7" }] },
      );
      const rejected = await h.decided(manager, runId, "confirm_ready", "rejected", {
        note: "No buddy meeting booked.",
      });
      expect(statesOf(rejected)).toEqual({
        hr_setup: "done",
        access_plan: "waiting",
        it_setup: null,
        welcome: null,
        confirm_ready: null,
        done: null,
      });
      const steps = rejected.data.steps;
      expect(steps.it_setup).toEqual({
        history: [expect.objectContaining({ output: expect.objectContaining({ assetTag: "LT-7" }) })],
      });
      expect(steps.welcome).toEqual({
        history: [expect.objectContaining({ output: { checklist: "CL-7" } })],
      });
      expect(steps.hr_setup.history).toEqual([]);
      expect(steps.confirm_ready).toMatchObject({ decision: "rejected", note: "No buddy meeting booked." });

      // Second pass to the end.
      await h.decided(manager, runId, "access_plan", "completed", {
        output: { accessRequests: ["crm"], equipment: "Laptop", buddy: "bo@example.com" },
      });
      await h.decided(it_, runId, "it_setup", "completed", {
        output: { assetTag: "LT-8", accounts: ["crm"], handoverPlan: "Desk 4." },
        evidence: [{ kind: "link", ref: "https://it.example.com/t/8" }],
      });
      await h.work(
        agent,
        runId,
        "welcome",
        { checklist: "CL-8" },
        { evidence: [{ kind: "link", ref: "https://wiki/cl-8" }] },
      );
      const ended = await h.decided(manager, runId, "confirm_ready", "approved");
      expect(ended.run).toMatchObject({ state: "ended", outcome: "ready" });
      expect(ended.data.steps.confirm_ready.history).toEqual([
        expect.objectContaining({ decision: "rejected" }),
      ]);
    });

    it("R1-3 support-escalation: route to tier1_handoff, two person tasks (one_of), confirm, close → ended resolved (§3.2, §2.3)", async () => {
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

    it("R1-4 contract-review without agent steps: uploads, legal and finance approve, signature with a second file → ended signed; agents get no work at any point, each person finds their item in get_work (§4.2, §5)", async () => {
      const starter = await h.agent("a_legalops");
      const owner = await h.person("owner@example.com");
      const legal = await h.person("lee@example.com", ["legal-reviewer"]);
      const finance = await h.person("fay@example.com", ["finance-reviewer"]);
      const signer = await h.person("sig@example.com", ["authorized-signatory"]);
      // After every step: an agent's get_work lists nothing of this run (it has no agent step), and the
      // person the next step is assigned to finds its item in their own get_work, then decides it.
      const noAgentWork = async (runId: string) =>
        expect(await h.findWork(starter, (i) => i.runId === runId, "contract-review")).toBeUndefined();
      const step = async (
        who: McpSession,
        runId: string,
        stepId: string,
        kind: string,
        decision: string,
        extra: Record<string, unknown> = {},
      ) => {
        await noAgentWork(runId);
        const item = await h.workItem(who, runId, stepId);
        expect(item).toMatchObject({ stepId, kind });
        const result = await who.call("decide", {
          ...item.decide.arguments,
          requestId: rid(),
          decision,
          ...extra,
        });
        if (!result.ok) throw new Error(`decide ${decision} on ${stepId}: ${JSON.stringify(result.error)}`);
        return result.data;
      };
      const started = await starter.ok("start_run", {
        process: "contract-review",
        inputs: { contractId: "C-14", document: "DMS-14", owner: "owner@example.com" },
      });
      const runId = started.run.id;
      const view = await owner.ok("get_run", { runId });
      expect(view.workItems[0].snapshot).toMatch(/^[0-9a-f]{64}$/);
      const draft = await h.upload(owner, "contract revision 3", "contract-r3.txt");
      await step(owner, runId, "prepare", "task", "completed", {
        output: { revision: "r3", summary: "USD, liability cap 1M." },
        evidence: [{ kind: "file", ref: draft.id }],
      });
      await step(legal, runId, "legal_review", "approve", "approved");
      await step(finance, runId, "finance_review", "approve", "approved");
      const signed = await h.upload(signer, "executed contract r3", "executed.txt");
      const ended = await step(signer, runId, "sign", "task", "completed", {
        output: { signedRevision: "r3", signedAt: "2026-10-06T15:00:00+02:00" },
        evidence: [{ kind: "file", ref: signed.id }],
      });
      await noAgentWork(runId);
      expect(ended.run).toMatchObject({ state: "ended", outcome: "signed" });
      expect(ended.data.steps.prepare.evidence[0]).toMatchObject({ kind: "file", ref: draft.id });
      expect(ended.data.steps.sign.evidence[0]).toMatchObject({
        kind: "file",
        ref: signed.id,
        sha256: signed.sha256,
      });

      // Finance rejects → back to preparation; legal must approve again.
      const other = (
        await starter.ok("start_run", {
          process: "contract-review",
          inputs: { contractId: "C-15", document: "DMS-15", owner: "owner@example.com" },
        })
      ).run.id;
      await step(owner, other, "prepare", "task", "completed", {
        output: { revision: "r1", summary: "Net 30." },
        evidence: [{ kind: "file", ref: draft.id }],
      });
      await step(legal, other, "legal_review", "approve", "approved");
      const back = await step(finance, other, "finance_review", "approve", "rejected", {
        note: "Net 60 please.",
      });
      expect(statesOf(back)).toMatchObject({ prepare: "waiting", legal_review: null, finance_review: null });
      await step(owner, other, "prepare", "task", "completed", {
        output: { revision: "r2", summary: "Net 60." },
        evidence: [{ kind: "file", ref: draft.id }],
      });
      await noAgentWork(other);
      expect(await h.workItem(legal, other, "legal_review")).toMatchObject({ kind: "approve" });
    });

    it("R1-5 expense-reimbursement: the initiator's receipts with a file, check, manager approves, reimburse → ended reimbursed; file urls open; agents cannot start it (§3.4, §5)", async () => {
      const employee = await h.person("emp@example.com");
      const manager = await h.person("boss@example.com");
      const payables = await h.person("ap@example.com", ["accounts-payable"]);
      const agent = await h.agent("a_expense");
      const inputs = { claimId: "EXP-5", manager: "boss@example.com" };
      refused(await agent.write("start_run", { process: "expense-reimbursement", inputs }), "invalid");
      const runId = (await employee.ok("start_run", { process: "expense-reimbursement", inputs })).run.id;
      const receipt = await h.upload(employee, "receipt: taxi 40 USD; hotel 200 USD", "receipts.txt");
      const lines = [
        { merchant: "Taxi Co", date: "2026-10-01", amount: 40, purpose: "Airport" },
        { merchant: "Hotel", date: "2026-10-01", amount: 200, purpose: "Conference" },
      ];
      await h.decided(employee, runId, "receipts", "completed", {
        output: { purpose: "Conference trip", totalUsd: 240, lines },
        evidence: [{ kind: "file", ref: receipt.id }],
        summary: "Two receipts.",
      });
      const claim = await h.claim(agent, runId, "check");
      const evidence = claim.data.steps.receipts.evidence[0];
      expect(evidence).toMatchObject({ kind: "file", ref: receipt.id, sha256: receipt.sha256 });
      const download = await fetch(evidence.url);
      expect(download.status).toBe(200);
      expect(await download.text()).toBe("receipt: taxi 40 USD; hotel 200 USD");
      await agent.ok("submit", {
        token: claim.token,
        output: { checkedTotalUsd: 240, checks: "Policy ok; no duplicates." },
        evidence: [{ kind: "link", ref: "https://expenses.example.com/EXP-5" }],
        summary: "Matched both lines; total 240.",
      });
      const rejected = await h.decided(manager, runId, "manager_review", "rejected", {
        note: "Attach the hotel folio.",
      });
      expect(statesOf(rejected)).toMatchObject({ receipts: "waiting", check: null, manager_review: null });
      expect(rejected.workItems[0].assignedTo).toEqual({ person: "emp@example.com" });
      await h.decided(employee, runId, "receipts", "completed", {
        output: { purpose: "Conference trip", totalUsd: 240, lines },
        evidence: [{ kind: "file", ref: receipt.id }],
      });
      await h.work(
        agent,
        runId,
        "check",
        { checkedTotalUsd: 240, checks: "ok" },
        {
          evidence: [{ kind: "link", ref: "https://expenses.example.com/EXP-5" }],
        },
      );
      await h.decided(manager, runId, "manager_review", "approved");
      const ended = await h.decided(payables, runId, "reimburse", "completed", {
        output: { paymentReference: "PAY-5", paidUsd: 240 },
        evidence: [{ kind: "link", ref: "https://erp.example.com/pay/5" }],
      });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "reimbursed" });
    });

    it("R1-6 supplier-rfp: three quotes as files, compare, select, record → ended selected; one file meets evidence: [file] (§5, §6 rule 3)", async () => {
      const buyer = await h.person("buyer@example.com", ["procurement-buyer"]);
      const manager = await h.person("pm@example.com", ["procurement-manager"]);
      const agent = await h.agent("a_sourcing");
      const inputs = {
        rfpId: "RFP-6",
        requirements: "500 chairs",
        supplierOne: "Acme",
        supplierTwo: "Birch",
        supplierThree: "Cedar",
      };
      const runId = (await buyer.ok("start_run", { process: "supplier-rfp", inputs })).run.id;
      const quotes = [];
      for (const s of ["Acme", "Birch", "Cedar"])
        quotes.push(await h.upload(buyer, `quote from ${s}`, `${s}.txt`));
      await h.decided(buyer, runId, "collect_quotes", "completed", {
        output: { quoteOne: "Q-A1", quoteTwo: "Q-B1", quoteThree: "Q-C1" },
        evidence: quotes.map((q) => ({ kind: "file", ref: q.id })),
      });
      await h.work(agent, runId, "compare", {
        comparison: "Birch cheapest at equal scope.",
        recommendedSupplier: "Birch",
        rationale: "Price and delivery.",
      });
      await h.decided(manager, runId, "select", "approved");
      const ended = await h.work(
        agent,
        runId,
        "record_selection",
        { sourcingRecord: "SRC-6" },
        {
          evidence: [{ kind: "link", ref: "https://sourcing/6" }],
        },
      );
      expect(ended.run).toMatchObject({ state: "ended", outcome: "selected" });
      expect(ended.data.steps.collect_quotes.evidence).toHaveLength(3);

      const one = (await buyer.ok("start_run", { process: "supplier-rfp", inputs })).run.id;
      const accepted = await h.decide(buyer, one, "collect_quotes", "completed", {
        output: { quoteOne: "Q-A1", quoteTwo: "Q-B1", quoteThree: "Q-C1" },
        evidence: [{ kind: "file", ref: quotes[0].id }],
      });
      expect(accepted.ok).toBe(true);
    });

    it("R1-7 blog-publication: rejection with a note, the next claim reads it, approve, a past wait_until continues at once → ended published (§3.1, §2.2)", async () => {
      const agent = await h.agent("a_writer");
      const editor = await h.person("ed@example.com", ["editor"]);
      const runId = (
        await editor.ok("start_run", {
          process: "blog-publication",
          inputs: { brief: "Launch post", slug: "launch", publishAt: "2026-01-01T09:00:00+01:00" },
        })
      ).run.id;
      const draft = (revision: string) => ({ revision, title: "Launch", summary: "We launched." });
      const link = { evidence: [{ kind: "link", ref: "https://cms/preview/1" }] };
      await h.work(agent, runId, "draft", draft("rev-1"), link);
      await h.decided(editor, runId, "editor_review", "rejected", { note: "Cite the benchmark source." });
      const again = await h.claim(agent, runId, "draft");
      expect(again.data.steps.editor_review.note).toBe("Cite the benchmark source.");
      expect(again.handoff).toBeNull();
      await agent.ok("submit", {
        token: again.token,
        output: draft("rev-2"),
        summary: "Added the source.",
        ...link,
      });
      const approved = await h.decided(editor, runId, "editor_review", "approved");
      // A wait_until whose time has passed continues at once, within the same write (§2.2, §4).
      expect(statesOf(approved)).toMatchObject({ publication_time: "done", publish: "ready" });
      expect(approved.data.steps.publication_time).toMatchObject({ by: "server" });
      const ended = await h.work(
        agent,
        runId,
        "publish",
        { url: "https://blog/launch", publishedRevision: "rev-2" },
        link,
      );
      expect(ended.run).toMatchObject({ state: "ended", outcome: "published" });
    });

    it("R1-8 incident-postmortem: lists of objects in an agent output and a person output → ended closed (§2.3)", async () => {
      const agent = await h.agent("a_pm");
      const owner = await h.person("io@example.com");
      const runId = (
        await owner.ok("start_run", {
          process: "incident-postmortem",
          inputs: { incidentId: "INC-8", incidentOwner: "io@example.com" },
        })
      ).run.id;
      const link = { evidence: [{ kind: "link", ref: "https://inc/8" }] };
      const proposedActions = [
        { deliverable: "Alert on queue depth", owner: "ops@example.com", due: "2026-11-01" },
        { deliverable: "Runbook update", owner: "sre@example.com", due: "2026-11-15" },
      ];
      const drafted = await h.work(
        agent,
        runId,
        "draft",
        { report: "Timeline and impact.", proposedActions },
        link,
      );
      expect(drafted.data.steps.draft.output.proposedActions).toEqual(proposedActions);
      await h.decided(owner, runId, "review", "approved");
      await h.work(
        agent,
        runId,
        "register_actions",
        { actionIds: ["ACT-1", "ACT-2"], trackerView: "https://tracker/v/8" },
        link,
      );
      const item = await h.workItem(owner, runId, "track_closure");
      expect(item.due).not.toBeNull();
      const closures = [
        { issue: "ACT-1", evidence: "https://tracker/ACT-1" },
        { issue: "ACT-2", evidence: "https://tracker/ACT-2" },
      ];
      const ended = await h.decided(owner, runId, "track_closure", "completed", {
        output: { closures, closureSummary: "Both verified." },
        ...link,
      });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "closed" });
      expect(ended.data.steps.track_closure.output.closures).toEqual(closures);
      expect(ended.data.steps.draft.output.proposedActions).toEqual(proposedActions);
    });

    it("R1-9 customer-offboarding: approval, a past wait_until, agents, an event, route lists, people → ended offboarded (§2.2, §3.6)", async () => {
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

    it("R1-10 major-incident-response in core: after activate exactly one work item; the others are not reached and have no due yet (§3.2)", async () => {
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
  });
}
