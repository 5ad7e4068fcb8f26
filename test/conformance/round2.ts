import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withoutUrls } from "../support/mcp.ts";
import { type Data, type Harness, PROCESSES_DIR, refused, rid, statesOf } from "./support.ts";

/**
 * Checklist round 2: exact calls and projected results (revision 2), with the current expected
 * results. The lease-expiry, time-out and overdue parts (R2-5 step 2 after a lease ended, R2-6 step 3,
 * R2-8 step 4, R2-9 step 4) need a movable clock and live in the timed suites.
 */
export function round2Scenarios(h: Harness): void {
  describe("checklist round 2", () => {
    it("R2-discovery: describe and list_processes answer with the shapes round 2 projects (tools.md describe, list_processes)", async () => {
      const agent = await h.agent("a_discovery");
      const d = await agent.ok("describe");
      expect(d).toMatchObject({
        protocol: "agentprocess",
        version: "core-2",
        profiles: [],
        leaseSeconds: 600,
        person: { format: "email" },
        maxUploadBytes: 10 * 1024 * 1024,
      });
      expect(d.tools).toEqual(
        expect.arrayContaining([
          "describe",
          "list_processes",
          "start_run",
          "get_run",
          "get_work",
          "claim",
          "submit",
          "escalate",
          "decide",
          "cancel",
          "renew",
          "upload",
          "send_event",
          "list_runs",
        ]),
      );
      const list = await agent.ok("list_processes");
      const invoice = list.items.find((p: Data) => p.name === "invoice-approval");
      expect(invoice).toEqual({
        name: "invoice-approval",
        description: expect.any(String),
        version: 1,
        inputs: { invoiceId: "string", invoiceDocument: "string", manager: "person" },
      });
    });

    it("R2-1 invoice-approval: claim shows the routes; submit with next and reason → one work item; approved continues at record, rejected (no on_reject) ends the run rejected (§3.2, §3.5)", async () => {
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

    it("R2-2 employee-onboarding: person path assignee, work item requirements equal claim.step's, a wrong key is not_accepted, failed ends the run (§3.4)", async () => {
      const hr = await h.person("hr2@example.com", ["hr-operations"]);
      const inputs = {
        employeeId: "E-2",
        employeeName: "Ana",
        startDate: "2026-10-07",
        hiringManager: "manager@example.com",
      };
      const started = await hr.ok("start_run", { process: "employee-onboarding", inputs });
      expect(started.run.state).toBe("waiting");
      const runId = started.run.id;
      const item = await h.workItem(hr, runId, "hr_setup");
      expect(item).toMatchObject({
        output: { hrisRecord: "string", location: "string", jobTitle: "string" },
        evidence: ["link"],
        next: null,
        handoff: null,
        decide: { decisions: ["completed", "failed"] },
      });
      const wrong = await h.decide(hr, runId, "hr_setup", "completed", {
        output: { employeeRecord: "HR-2" },
        evidence: [{ kind: "link", ref: "https://hris/2" }],
      });
      const error = refused(wrong, "not_accepted");
      expect(error.issues).toEqual(
        expect.arrayContaining(["output.hrisRecord: missing", "output.employeeRecord: not declared"]),
      );
      await h.decided(hr, runId, "hr_setup", "completed", {
        output: { hrisRecord: "HR-2", location: "Remote", jobTitle: "Analyst" },
        evidence: [{ kind: "link", ref: "https://hris/2" }],
      });
      const manager = await h.person("manager@example.com");
      expect((await h.workItem(manager, runId, "access_plan")).assignedTo).toEqual({
        person: "manager@example.com",
      });

      // Work item requirements equal claim.step's (§3.4): the fixture has no agent step shaped like its
      // tasks, so `twin-steps` declares an agent step and a task alike (with a route list); the task's
      // work item and the agent step's escalation item both carry what the agent's claim carries.
      const agent = await h.agent("a_twin2");
      const reviewer = await h.person("rev2@example.com", ["reviewer"]);
      const routed = async (to: "gather" | "confirm") => {
        const id = (await agent.ok("start_run", { process: "twin-steps", inputs: {} })).run.id;
        await h.work(agent, id, "route", {}, { next: to, reason: `Route to ${to}.` });
        return id;
      };
      const claimed = await h.claim(agent, await routed("gather"), "gather");
      const task = await h.workItem(reviewer, await routed("confirm"), "confirm");
      const requirements = (x: Data) => ({ output: x.output, evidence: x.evidence, next: x.next });
      expect(claimed.step.next).toEqual([{ to: "accepted", when: "Every check passed" }, { to: "closed" }]);
      expect(claimed.step.evidence).toEqual(["link", "file"]);
      expect(Object.keys(claimed.step.output).sort()).toEqual([
        "checksComplete",
        "level",
        "notes",
        "recordRef",
        "systems",
      ]);
      expect(requirements(task)).toEqual(requirements(claimed.step));
      expect(task.text).toBe(claimed.step.instructions);
      const escalated = await agent.ok("escalate", { token: claimed.token, note: "The HRIS is down." });
      expect(requirements(escalated.workItems[0])).toEqual(requirements(claimed.step));

      const other = (await hr.ok("start_run", { process: "employee-onboarding", inputs })).run.id;
      const failed = await h.decided(hr, other, "hr_setup", "failed", { note: "Candidate withdrew." });
      expect(failed.run).toMatchObject({
        state: "ended",
        outcome: "failed",
        ended: { by: "hr2@example.com", note: "Candidate withdrew." },
      });
      expect(statesOf(failed).hr_setup).toBe("failed");
      expect(failed.data.steps.hr_setup).toEqual({
        decision: "failed",
        note: "Candidate withdrew.",
        by: "hr2@example.com",
        at: expect.any(String),
        history: [],
      });
    });

    it("R2-3 support-escalation: escalate → operator queue item with three decisions; returned → handoff.returned on get_work and claim; reclaim → resolved; or the operator completes it (§3.3, §3.4)", async () => {
      const agent = await h.agent("a_support2");
      const tier1 = await h.person("t1b@example.com", ["tier1-lead"]);
      const ops = await h.operator("ops2@example.com");
      const toClose = async () => {
        const runId = (
          await agent.ok("start_run", { process: "support-escalation", inputs: { ticketId: "T-23" } })
        ).run.id;
        await h.work(
          agent,
          runId,
          "diagnose",
          { diagnosis: "Fixed by restart.", attemptedFixes: "Restart." },
          {
            evidence: [{ kind: "link", ref: "https://support/T-23" }],
            next: "confirm",
            reason: "Runbook fix worked.",
          },
        );
        await h.decided(tier1, runId, "confirm", "approved");
        return runId;
      };
      const runId = await toClose();
      const claim = await h.claim(agent, runId, "close_ticket");
      const escalated = await agent.ok("escalate", {
        token: claim.token,
        note: "The ticket system refuses the close.",
      });
      expect(statesOf(escalated).close_ticket).toBe("waiting");
      expect(escalated.run.state).toBe("waiting");
      const item = escalated.workItems[0];
      expect(item).toMatchObject({
        stepId: "close_ticket",
        kind: "agent",
        assignedTo: { group: "operators" },
        escalation: { note: "The ticket system refuses the close.", by: "a_support2" },
        decide: { decisions: ["returned", "completed", "failed"] },
      });
      refused(
        await agent.write("submit", {
          token: claim.token,
          output: { ticket: "T-23" },
          evidence: [{ kind: "link", ref: "x" }],
          summary: "x",
        }),
        "stale",
      );
      const inbox = await h.workItem(ops, runId, "close_ticket");
      expect(inbox.escalation.note).toBe("The ticket system refuses the close.");
      const returned = await h.decided(ops, runId, "close_ticket", "returned", {
        note: "Unlocked it; try again.",
      });
      expect(statesOf(returned).close_ticket).toBe("ready");
      const listed = await h.agentItem(agent, runId, "close_ticket");
      expect(listed.handoff).toEqual({
        returned: { note: "Unlocked it; try again.", by: "ops2@example.com", at: expect.any(String) },
      });
      const again = await h.claim(agent, runId, "close_ticket");
      expect(again.handoff).toEqual(listed.handoff);
      const ended = await agent.ok("submit", {
        token: again.token,
        output: { ticket: "T-23" },
        evidence: [{ kind: "link", ref: "https://support/T-23" }],
        summary: "Closed.",
      });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "resolved" });

      // Alternative: the operator completes it under the same acceptance.
      const alt = await toClose();
      const c = await h.claim(agent, alt, "close_ticket");
      await agent.ok("escalate", { token: c.token, note: "Stuck." });
      refused(
        await h.decide(ops, alt, "close_ticket", "completed", { output: { ticket: "T-23" } }),
        "not_accepted",
        ["evidence: link required"],
      );
      const done = await h.decided(ops, alt, "close_ticket", "completed", {
        output: { ticket: "T-23" },
        evidence: [{ kind: "link", ref: "https://support/T-23" }],
      });
      expect(done.run.outcome).toBe("resolved");
      expect(done.data.steps.close_ticket.by).toBe("ops2@example.com");
    });

    it("R2-4 contract-review: upload → {id, sha256, bytes}; file evidence carries sha256 and url; finance rejects → legal to history, finance note current, handoff null; unknown upload id (§3.1, §5)", async () => {
      const starter = await h.person("starter@example.com");
      const owner = await h.person("owner4@example.com");
      const legal = await h.person("lee4@example.com", ["legal-reviewer"]);
      const finance = await h.person("fay4@example.com", ["finance-reviewer"]);
      const signer = await h.person("sig4@example.com", ["authorized-signatory"]);
      const inputs = { contractId: "C-24", document: "DMS-24", owner: "owner4@example.com" };
      const upload = await owner.ok("upload", {
        fileName: "contract.txt",
        contentType: "text/plain",
        contentBase64: "Y29udHJhY3Q=",
      });
      expect(upload).toEqual({
        id: expect.any(String),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        bytes: 8,
      });
      expect(upload.sha256).toBe(createHash("sha256").update("contract").digest("hex"));
      const runId = (await starter.ok("start_run", { process: "contract-review", inputs })).run.id;
      refused(
        await h.decide(owner, runId, "prepare", "completed", {
          output: { revision: "r1", summary: "Net 30." },
          evidence: [{ kind: "file", ref: "f_000" }],
        }),
        "not_accepted",
        ["evidence f_000: not found", "evidence: file required"],
      );
      const prepared = await h.decided(owner, runId, "prepare", "completed", {
        output: { revision: "r1", summary: "Net 30." },
        evidence: [{ kind: "file", ref: upload.id }],
      });
      expect(prepared.data.steps.prepare.evidence[0]).toEqual({
        kind: "file",
        ref: upload.id,
        sha256: upload.sha256,
        url: expect.stringMatching(/^https?:\/\//),
      });
      await h.decided(legal, runId, "legal_review", "approved");
      const rejected = await h.decided(finance, runId, "finance_review", "rejected", {
        note: "Change payment terms to net 60.",
      });
      expect(statesOf(rejected)).toMatchObject({
        prepare: "waiting",
        legal_review: null,
        finance_review: null,
      });
      expect(rejected.data.steps.legal_review).toEqual({
        history: [expect.objectContaining({ decision: "approved" })],
      });
      expect(rejected.data.steps.finance_review).toMatchObject({
        decision: "rejected",
        note: "Change payment terms to net 60.",
        by: "fay4@example.com",
      });
      const again = await h.workItem(owner, runId, "prepare");
      expect(again.handoff).toBeNull();
      const view = await owner.ok("get_run", { runId });
      expect(view.data.steps.finance_review.note).toBe("Change payment terms to net 60.");
      await h.decided(owner, runId, "prepare", "completed", {
        output: { revision: "r2", summary: "Net 60." },
        evidence: [{ kind: "file", ref: upload.id }],
      });
      await h.decided(legal, runId, "legal_review", "approved");
      await h.decided(finance, runId, "finance_review", "approved");
      const signed = await h.upload(signer, "executed", "executed.txt");
      const ended = await h.decided(signer, runId, "sign", "completed", {
        output: { signedRevision: "r2", signedAt: "2026-10-06T12:00:00Z" },
        evidence: [{ kind: "file", ref: signed.id }],
      });
      expect(ended.run.outcome).toBe("signed");
    });

    it("R2-5 expense: 85.5 is not rounded; a replayed write returns the original result and completes nothing twice; changed arguments are a conflict (§2.3, §4)", async () => {
      const employee = await h.person("emp5@example.com");
      const manager = await h.person("mgr5@example.com");
      const payables = await h.person("ap5@example.com", ["accounts-payable"]);
      const agent = await h.agent("a_expense5");
      const runId = (
        await employee.ok("start_run", {
          process: "expense-reimbursement",
          inputs: { claimId: "EXP-55", manager: "mgr5@example.com" },
        })
      ).run.id;
      const receipt = await h.upload(employee, "receipt", "r.txt");
      expect(receipt.bytes).toBe(7);
      await h.decided(employee, runId, "receipts", "completed", {
        output: { purpose: "Lunch", totalUsd: 85.5, lines: [{ merchant: "Cafe", amount: 85.5 }] },
        evidence: [{ kind: "file", ref: receipt.id }],
      });
      const claim = await h.claim(agent, runId, "check");
      expect(claim.data.steps.receipts.output.totalUsd).toBe(85.5);
      const submit = {
        token: claim.token,
        output: { checkedTotalUsd: 85.5, checks: "ok" },
        evidence: [{ kind: "link", ref: "https://expenses/55" }],
        summary: "Checked.",
        requestId: rid(),
      };
      const first = await agent.call("submit", submit);
      expect(first.ok).toBe(true);
      const replay = await agent.call("submit", submit);
      expect(withoutUrls(replay)).toEqual(withoutUrls(first));
      refused(await agent.call("submit", { ...submit, summary: "Checked twice." }), "conflict");
      await h.decided(manager, runId, "manager_review", "approved");
      const item = await h.workItem(payables, runId, "reimburse");
      const last = {
        ...item.decide.arguments,
        requestId: rid(),
        decision: "completed",
        output: { paymentReference: "PAY-55", paidUsd: 85.5 },
        evidence: [{ kind: "link", ref: "https://erp/pay/55" }],
      };
      const done = await payables.call("decide", last);
      expect(done.ok && done.data.run.outcome).toBe("reimbursed");
      expect(withoutUrls(await payables.call("decide", last))).toEqual(withoutUrls(done));
      refused(
        await payables.call("decide", { ...last, output: { paymentReference: "PAY-56", paidUsd: 85.5 } }),
        "conflict",
      );
      const view = await employee.ok("get_run", { runId });
      expect(view.run).toMatchObject({ state: "ended", outcome: "reimbursed" });
      expect(view.data.steps.check.history).toEqual([]);
      expect(view.data.steps.reimburse.output.paidUsd).toBe(85.5);
    });

    it("R2-6 supplier-rfp: renew → new token and expiresAt, the old token is stale; submit with the new one; select; record → ended selected (§3.3, tools.md renew)", async () => {
      const buyer = await h.person("buyer6@example.com", ["procurement-buyer"]);
      const manager = await h.person("pm6@example.com", ["procurement-manager"]);
      const agent = await h.agent("a_sourcing6");
      const runId = (
        await buyer.ok("start_run", {
          process: "supplier-rfp",
          inputs: {
            rfpId: "RFP-26",
            requirements: "Chairs",
            supplierOne: "Acme",
            supplierTwo: "Birch",
            supplierThree: "Cedar",
          },
        })
      ).run.id;
      const q = await h.upload(buyer, "quotes", "quotes.txt");
      await h.decided(buyer, runId, "collect_quotes", "completed", {
        output: { quoteOne: "Q1", quoteTwo: "Q2", quoteThree: "Q3" },
        evidence: [{ kind: "file", ref: q.id }],
      });
      const claim = await h.claim(agent, runId, "compare");
      const renewed = await agent.ok("renew", {
        token: claim.token,
        progress: "Normalized two of three quotes.",
      });
      expect(renewed.token).not.toBe(claim.token);
      expect(Date.parse(renewed.expiresAt)).toBeGreaterThanOrEqual(Date.parse(claim.expiresAt));
      const output = { comparison: "Birch best.", recommendedSupplier: "Birch", rationale: "Price." };
      refused(await agent.write("submit", { token: claim.token, output, summary: "x" }), "stale");
      refused(await agent.write("renew", { token: claim.token }), "stale");
      await agent.ok("submit", { token: renewed.token, output, summary: "Compared all three." });
      await h.decided(manager, runId, "select", "approved");
      const ended = await h.work(
        agent,
        runId,
        "record_selection",
        { sourcingRecord: "SRC-26" },
        {
          evidence: [{ kind: "link", ref: "https://sourcing/26" }],
        },
      );
      expect(ended.run).toMatchObject({ state: "ended", outcome: "selected" });
    });

    it("R2-7 an approval with a list next is refused at publication; decide rejected carrying next/reason is invalid (§2.2, tools.md decide)", async () => {
      await expect(
        h.baton.publish(join(PROCESSES_DIR, "approval-list-next"), { editor: "editor" }),
      ).rejects.toThrow(/steps\[1\]\.next: a list of routes is allowed only on agent and task steps/);
      const agent = await h.agent("a_writer7");
      const editor = await h.person("ed7@example.com", ["editor"]);
      const runId = (
        await editor.ok("start_run", {
          process: "blog-publication",
          inputs: { brief: "b", slug: "s", publishAt: "2026-01-01T00:00:00Z" },
        })
      ).run.id;
      await h.work(
        agent,
        runId,
        "draft",
        { revision: "r", title: "t", summary: "s" },
        { evidence: [{ kind: "link", ref: "x" }] },
      );
      const error = refused(
        await h.decide(editor, runId, "editor_review", "rejected", {
          note: "Hold it.",
          next: "draft",
          reason: "Hold.",
        }),
        "invalid",
      );
      expect(error.issues).toEqual([
        'next: only with decision "completed", not "rejected"',
        'reason: only with decision "completed", not "rejected"',
      ]);
    });

    it("R2-8 incident-postmortem: track_closure carries due and overdue false; a rejected review returns to draft, keeps its rejection current, and the re-reviewed item has a restarted due (§2.2 due, §3.1)", async () => {
      const agent = await h.agent("a_pm8");
      const owner = await h.person("io8@example.com");
      const runId = (
        await owner.ok("start_run", {
          process: "incident-postmortem",
          inputs: { incidentId: "INC-28", incidentOwner: "io8@example.com" },
        })
      ).run.id;
      const link = { evidence: [{ kind: "link", ref: "https://inc/28" }] };
      const DAY = 24 * 60 * 60 * 1000;
      // `due` is measured from the moment the step became ready: the `updatedAt` of the write that readied it.
      const dueAfter = (item: Data, readied: Data) =>
        Date.parse(item.due) - Date.parse(readied.run.updatedAt);
      const drafted = await h.work(
        agent,
        runId,
        "draft",
        { report: "v1", proposedActions: [{ ref: "ACT-1" }, { ref: "ACT-2" }] },
        link,
      );
      const firstReview = await h.workItem(owner, runId, "review");
      expect(dueAfter(firstReview, drafted)).toBe(5 * DAY);
      const rejected = await h.decided(owner, runId, "review", "rejected", { note: "ACT-2 has no owner." });
      expect(statesOf(rejected)).toMatchObject({ draft: "ready", review: null });
      expect(rejected.data.steps.review).toMatchObject({ decision: "rejected", note: "ACT-2 has no owner." });
      expect(rejected.data.steps.draft.output.report).toBe("v1"); // #33: current until replaced
      const redrafted = await h.work(
        agent,
        runId,
        "draft",
        { report: "v2", proposedActions: [{ ref: "ACT-1" }] },
        link,
      );
      expect(redrafted.data.steps.draft).toMatchObject({
        output: { report: "v2" },
        history: [{ output: { report: "v1" } }],
      });
      const secondReview = await h.workItem(owner, runId, "review");
      expect(secondReview.id).not.toBe(firstReview.id);
      // Restarted: five days from the second readiness, not the first.
      expect(dueAfter(secondReview, redrafted)).toBe(5 * DAY);
      expect(Date.parse(redrafted.run.updatedAt)).toBeGreaterThan(Date.parse(drafted.run.updatedAt));
      await h.decided(owner, runId, "review", "approved");
      const registered = await h.work(
        agent,
        runId,
        "register_actions",
        { actionIds: ["ACT-1"], trackerView: "https://t/28" },
        link,
      );
      const view = await owner.ok("get_run", { runId });
      const closure = view.steps.find((s: Data) => s.id === "track_closure");
      expect(closure).toMatchObject({ state: "waiting", overdue: false });
      expect(dueAfter(closure, registered)).toBe(30 * DAY);
      expect((await h.workItem(owner, runId, "track_closure")).due).toBe(closure.due);
      const ended = await h.decided(owner, runId, "track_closure", "completed", {
        output: { closures: [{ issue: "ACT-1" }], closureSummary: "Done." },
        ...link,
      });
      expect(ended.run.outcome).toBe("closed");
    });

    it("R2-9 customer-offboarding events: an early event is held ({consumedBy: null}) and consumed on readiness; two early events are consumed oldest first, the newer held for a later wait of its name until the run ends, when it is dropped unconsumed (§3.6)", async () => {
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

    it("R2-10 a step with an invented branches key is refused at publication as an unknown key (§2.1, §2.2); the parallel form is R3-1", async () => {
      await expect(
        h.baton.publish(join(PROCESSES_DIR, "branches-key"), {
          "operations-lead": "o",
          "security-lead": "s",
        }),
      ).rejects.toThrow(/steps\[1\]\.branches: unknown field/);
    });

    it("R2-extra a: an agent starting a process whose later step is assigned to initiator is invalid (tools.md start_run)", async () => {
      const agent = await h.agent("a_extra");
      const error = refused(
        await agent.write("start_run", { process: "later-initiator", inputs: {} }),
        "invalid",
      );
      expect(error.issues).toEqual(["steps.sign_off.person: initiator needs a person to start the run"]);
    });

    it("R2-extra b: after failed and after cancel, items are removed and late writes are run_ended; cancel cancels the unfinished step and kills its live token; in core a failed decision leaves no other unfinished step or live token, so there the failed step is failed, nothing else reached, held events dropped (§3.5)", async () => {
      // Core has one open step at a time, and a `failed` decision needs a work item: a person step, or an
      // escalated agent step whose claim the escalation already ended. So when `failed` ends a core run no
      // other step is unfinished and no token is live; what the failed half can show is the failed step,
      // the rest never reached, the item gone, a held event dropped, and every late write run_ended.
      const agent = await h.agent("a_extra_b");
      const editor = await h.person("edb@example.com", ["editor"]);
      const ops = await h.operator();
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "draft");
      expect(
        await agent.ok("send_event", { runId, name: "brief_ready", data: { brief: "HELD-BRIEF-B" } }),
      ).toEqual({ consumedBy: null });
      const escalated = await agent.ok("escalate", { token: claim.token, note: "Need a brief." });
      const item = escalated.workItems[0];
      const submit = { token: claim.token, output: { revision: "r" }, summary: "x" };
      refused(await agent.write("submit", submit), "stale");
      const failed = await h.decided(ops, runId, "draft", "failed", { note: "No brief will come." });
      expect(failed.run).toMatchObject({
        state: "ended",
        outcome: "failed",
        ended: { by: "olga@example.com", note: "No brief will come." },
      });
      expect(statesOf(failed)).toEqual({ draft: "failed", editor_review: null, done: null });
      expect(failed.data.steps.draft).toMatchObject({ decision: "failed", note: "No brief will come." });
      expect(failed.workItems).toEqual([]);
      // The held event is not run data; it shows nowhere and no write can deliver it now.
      expect(JSON.stringify(failed)).not.toContain("HELD-BRIEF-B");
      refused(await agent.write("submit", submit), "conflict", ["run_ended"]);
      refused(await agent.write("claim", { runId, stepId: "draft" }), "conflict", ["run_ended"]);
      refused(await agent.write("send_event", { runId, name: "brief_ready" }), "conflict", ["run_ended"]);
      refused(await ops.write("cancel", { runId, reason: "Late." }), "conflict", ["run_ended"]);
      refused(
        await ops.write("decide", { ...item.decide.arguments, decision: "returned", note: "Go on." }),
        "conflict",
        ["run_ended"],
      );
      expect(await h.inboxEntry(ops, runId, "draft")).toBeUndefined();
      expect(await h.agentItem(agent, runId, "draft")).toBeUndefined();

      const other = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const c = await h.claim(agent, other, "draft");
      const cancelled = await ops.ok("cancel", { runId: other, reason: "Brief withdrawn." });
      expect(statesOf(cancelled)).toEqual({ draft: "cancelled", editor_review: null, done: null });
      expect(cancelled.workItems).toEqual([]);
      refused(
        await agent.write("submit", { token: c.token, output: { revision: "r" }, summary: "x" }),
        "conflict",
        ["run_ended"],
      );
      refused(await agent.write("renew", { token: c.token }), "conflict", ["run_ended"]);
      refused(await agent.write("escalate", { token: c.token, note: "x" }), "conflict", ["run_ended"]);
      expect(await h.agentItem(agent, other, "draft")).toBeUndefined();
    });
  });
}
