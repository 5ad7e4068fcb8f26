import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Data, type Harness, PROCESSES_DIR, refused, rid, statesOf } from "../support.ts";

/**
 * Evidence (§5, tools.md upload): files by upload id with their hash and a short-lived url, links as
 * stated, what `evidence: [file]` requires.
 */
export function evidenceScenarios(h: Harness): void {
  describe("§5 evidence: upload, files and links", () => {
    it("[R1-5 #62 #88] expense-reimbursement: the initiator's receipts with a file, check, manager approves, reimburse → ended reimbursed; file urls open; agents cannot start it (§3.4, §5)", async () => {
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

    it("[R1-6 #86] supplier-rfp: three quotes as files, compare, select, record → ended selected; one file meets evidence: [file] (§5, §6 rule 3)", async () => {
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

    it("[R2-4 #85 #87 R2-B4] contract-review: upload → {id, sha256, bytes}; file evidence carries sha256 and url; finance rejects → legal to history, finance note current, handoff null; unknown upload id (§3.1, §5)", async () => {
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

    it("[R3-2a] expense via get_run/decide only: evidence: [file] refuses none or a guessed id; after a real upload the manager sees sha256 and url (§3.4, §5, §6 rule 3)", async () => {
      const employee = await h.person("emp3@example.com");
      const manager = await h.person("mgr3@example.com");
      const runId = (
        await employee.ok("start_run", {
          process: "expense-reimbursement",
          inputs: { claimId: "EXP-32", manager: "mgr3@example.com" },
        })
      ).run.id;
      const view = await employee.ok("get_run", { runId });
      const item = view.workItems[0];
      expect(item).toMatchObject({
        stepId: "receipts",
        evidence: ["file"],
        assignedTo: { person: "emp3@example.com" },
      });
      const output = { purpose: "Travel", totalUsd: 12, lines: [{ merchant: "Bus" }] };
      const decide = (evidence: Data) =>
        employee.call("decide", {
          ...item.decide.arguments,
          requestId: rid(),
          decision: "completed",
          output,
          evidence,
        });
      refused(await decide([]), "not_accepted", ["evidence: file required"]);
      refused(
        await decide([{ kind: "file", ref: "https://drive.example.com/receipt.pdf" }]),
        "not_accepted",
        ["evidence https://drive.example.com/receipt.pdf: not found", "evidence: file required"],
      );
      refused(
        await decide([{ kind: "link", ref: "https://drive.example.com/receipt.pdf" }]),
        "not_accepted",
        ["evidence: file required"],
      );
      expect((await employee.ok("get_run", { runId })).workItems[0].id).toBe(item.id);
      const receipt = await h.upload(employee, "bus ticket 12 USD", "bus.txt");
      expect((await decide([{ kind: "file", ref: receipt.id }])).ok).toBe(true);
      const agent = await h.agent("a_r3a");
      await h.work(
        agent,
        runId,
        "check",
        { checkedTotalUsd: 12, checks: "ok" },
        { evidence: [{ kind: "link", ref: "x" }] },
      );
      const managerView = await manager.ok("get_run", { runId });
      expect(managerView.data.steps.receipts.evidence[0]).toEqual({
        kind: "file",
        ref: receipt.id,
        sha256: receipt.sha256,
        url: expect.any(String),
      });
      const approved = await h.decided(manager, runId, "manager_review", "approved");
      expect(statesOf(approved)).toMatchObject({ manager_review: "done", reimburse: "waiting" });
    });

    it("[#53 #91 upload.invalid:arguments] upload takes a requestId; an upload of another organization is not found (tools.md upload, §5)", async () => {
      const agent = await h.agent("a_53");
      refused(
        await agent.call("upload", { fileName: "a.txt", contentType: "text/plain", contentBase64: "YQ==" }),
        "invalid",
        ["requestId: required"],
      );
      const org = h.org("files-org");
      await h.publish(join(PROCESSES_DIR, "drafting"), { editor: "editor" }, org);
      const foreign = await h.upload(await h.agent("a_53", org), "foreign bytes");
      const editor = await h.person("ed53@example.com", ["editor"]);
      const contract = (
        await editor.ok("start_run", {
          process: "contract-review",
          inputs: { contractId: "C", document: "D", owner: "ed53@example.com" },
        })
      ).run.id;
      refused(
        await h.decide(editor, contract, "prepare", "completed", {
          output: { revision: "r", summary: "s" },
          evidence: [{ kind: "file", ref: foreign.id }],
        }),
        "not_accepted",
        [`evidence ${foreign.id}: not found`, "evidence: file required"],
      );
    });

    it("[#66 #85 #86] a link is recorded as stated, with no url added; extra evidence items of any kind are kept (§5)", async () => {
      const agent = await h.agent("a_66");
      const runId = (
        await agent.ok("start_run", { process: "support-escalation", inputs: { ticketId: "T-66" } })
      ).run.id;
      const file = await h.upload(agent, "log excerpt", "log.txt");
      const view = await h.work(
        agent,
        runId,
        "diagnose",
        { diagnosis: "d", attemptedFixes: "f" },
        {
          evidence: [
            { kind: "link", ref: "DOC-42 rev 3" },
            { kind: "file", ref: file.id },
            { kind: "link", ref: "https://support/T-66" },
          ],
          next: "tier1_handoff",
          reason: "r",
        },
      );
      expect(view.data.steps.diagnose.evidence).toEqual([
        { kind: "link", ref: "DOC-42 rev 3" },
        { kind: "file", ref: file.id, sha256: file.sha256, url: expect.any(String) },
        { kind: "link", ref: "https://support/T-66" },
      ]);
    });

    it("[#92] an uploaded file is kept with its run: after the run ended, its evidence url still opens the bytes (§5)", async () => {
      const agent = await h.agent("a_92");
      const file = await h.upload(agent, "kept with the run", "kept.txt");
      const runId = (
        await agent.ok("start_run", { process: "triage", inputs: { ticket: "T-92", team: "red" } })
      ).run.id;
      const ended = await h.work(
        agent,
        runId,
        "classify",
        { label: "bug" },
        { evidence: [{ kind: "file", ref: file.id }] },
      );
      expect(ended.run.state).toBe("ended");
      const later = await (await h.person("reader92@example.com")).ok("get_run", { runId });
      const item = later.data.steps.classify.evidence[0];
      expect(item).toMatchObject({ kind: "file", ref: file.id, sha256: file.sha256 });
      const download = await fetch(item.url);
      expect(download.status).toBe(200);
      expect(await download.text()).toBe("kept with the run");
    });
  });
}
