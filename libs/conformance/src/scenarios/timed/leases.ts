import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { withoutUrls } from "../../mcp.ts";
import type { Harness } from "../../support.ts";
import { iso, MINUTE } from "../../time.ts";
import { agentItem, claimStep, decideStep, doStep, link, stepOf } from "../../walk.ts";
import { LEASE_WHO } from "./walks.ts";

/** describe.leaseSeconds of the deployments these scenarios run against (DEFAULTS.leaseSeconds). */
export const LEASE = 10 * MINUTE;

/**
 * Leases (§3.3): a lease that ends makes the step claimable at once with `handoff.progress`, `renew`
 * replaces the token, and a `submit` or `claim` replayed after its lease ended returns its original
 * result.
 */
export function timedLeaseScenarios(h: Harness): void {
  describe("§3.3 leases: expiry, renew, and replays after a lease ended", () => {
    it("[#44] describe advertises the lease these tests move past (tools.md describe)", async () => {
      const { agent } = await h.sessionsOf(LEASE_WHO);
      expect((await agent.ok("describe")).leaseSeconds * 1000).toBe(LEASE);
    });

    it("[R2-6 #41 #55 R2-B6 submit.stale] supplier-rfp: renew makes the old token stale; after the lease ends a submit is stale, get_work lists the step at once with handoff.progress, and the next claim carries it (C §3.3, tools.md renew)", async () => {
      const { agent, other, buyer, procurement } = await h.sessionsOf(LEASE_WHO);
      const clock = h.clock;
      const started = await buyer.ok("start_run", {
        process: "supplier-rfp",
        inputs: {
          rfpId: "RFP-7",
          requirements: "500 laptops, delivery in Q1",
          supplierOne: "Acme",
          supplierTwo: "Birch",
          supplierThree: "Cedar",
        },
      });
      const runId = started.run.id as string;
      const files = [];
      for (const name of ["acme", "birch", "cedar"]) {
        files.push(
          await buyer.ok("upload", {
            fileName: `${name}.txt`,
            contentType: "text/plain",
            contentBase64: Buffer.from(`${name} quote`).toString("base64"),
          }),
        );
      }
      await decideStep(buyer, runId, "collect_quotes", {
        decision: "completed",
        output: { quoteOne: "Q-ACME-1", quoteTwo: "Q-BIRCH-1", quoteThree: "Q-CEDAR-1" },
        evidence: files.map((f) => ({ kind: "file", ref: f.id })),
      });

      const claim = await claimStep(agent, runId, "compare");
      expect(claim.handoff).toBeNull();
      const now = await clock.now();
      expect(claim.expiresAt).toBe(iso(now + LEASE));
      const progress = "Normalized Acme and Birch to EUR; Cedar's quote excludes delivery.";
      const renewed = await agent.ok("renew", { token: claim.token, progress });
      expect(renewed.token).not.toBe(claim.token);
      expect(renewed.expiresAt).toBe(iso(now + LEASE));
      const submission = {
        output: {
          comparison: "Acme cheapest with delivery.",
          recommendedSupplier: "Acme",
          rationale: "Price.",
        },
        summary: "Compared the three quotes.",
      };
      const old = await agent.write("submit", { token: claim.token, ...submission });
      expect(old.ok ? null : old.error.code).toBe("stale");

      await clock.advance(LEASE);
      const late = await agent.write("submit", { token: renewed.token, ...submission });
      expect(late.ok ? null : late.error.code).toBe("stale");
      const item = await agentItem(other, runId, "compare");
      expect(item).toMatchObject({ handoff: { progress }, overdue: false });
      expect(stepOf(await other.ok("get_run", { runId }), "compare").state).toBe("ready");

      const reclaimed = await other.ok("claim", { ...item.claim.arguments, requestId: randomUUID() });
      expect(reclaimed.handoff).toEqual({ progress });
      await other.ok("submit", { token: reclaimed.token, ...submission });
      await decideStep(procurement, runId, "select", { decision: "approved" });
      const ended = await doStep(other, runId, "record_selection", {
        output: { sourcingRecord: "SRC-7" },
        evidence: [link("https://sourcing.example.com/src-7")],
      });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "selected" });
    });

    it("[R2-5 R3-3a R3-Q14 R2-B5 #52] expense-reimbursement: a submit replayed with its requestId after the lease ended returns the original run view and completes nothing twice; other arguments are a conflict (C §3.3, §4)", async () => {
      const { agent, employee, manager, payables } = await h.sessionsOf(LEASE_WHO);
      const clock = h.clock;
      const started = await employee.ok("start_run", {
        process: "expense-reimbursement",
        inputs: { claimId: "EXP-55", manager: "manager@example.com" },
      });
      const runId = started.run.id as string;
      const receipt = await employee.ok("upload", {
        fileName: "receipt.txt",
        contentType: "text/plain",
        contentBase64: "cmVjZWlwdA==",
      });
      expect(receipt.bytes).toBe(7);
      await decideStep(employee, runId, "receipts", {
        decision: "completed",
        output: {
          purpose: "Client visit",
          totalUsd: 85.5,
          lines: [{ merchant: "Cafe", date: "2026-10-01", amount: 85.5, purpose: "Lunch with client" }],
        },
        evidence: [{ kind: "file", ref: receipt.id }],
      });
      const claim = await claimStep(agent, runId, "check");
      const args = {
        token: claim.token,
        output: { checkedTotalUsd: 85.5, checks: "Receipt matches; within policy; no duplicate." },
        evidence: [link("https://expenses.example.com/exp-55")],
        summary: "Checked the one line against the receipt and the policy.",
        requestId: randomUUID(),
      };
      const original = await agent.call("submit", args);
      expect(original.ok).toBe(true);

      // The response was lost; the agent retries after its lease has ended.
      await clock.advance(LEASE + MINUTE);
      const replay = await agent.call("submit", args);
      expect(replay.ok).toBe(true);
      expect(withoutUrls(replay)).toEqual(withoutUrls(original));
      expect((replay.ok && replay.data).expiresAt).toBeUndefined();
      const view = await agent.ok("get_run", { runId });
      expect(view.data.steps.check.history).toEqual([]);
      expect(view.workItems.map((w: { stepId: string }) => w.stepId)).toEqual(["manager_review"]);

      const changed = await agent.call("submit", { ...args, summary: "Something else." });
      expect(changed.ok ? null : changed.error.code).toBe("conflict");

      await decideStep(manager, runId, "manager_review", { decision: "approved" });
      const ended = await decideStep(payables, runId, "reimburse", {
        decision: "completed",
        output: { paymentReference: "PAY-55", paidUsd: 85.5 },
        evidence: [link("PAY-55")],
      });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "reimbursed" });
      expect(ended.data.inputs).toEqual({ claimId: "EXP-55", manager: "manager@example.com" });
    });

    it("[#41 #52] when a lease ends the step is claimable at once by anyone; the lost claim replayed returns the original token and expiresAt, and that token is stale (C §3.3, tools.md claim)", async () => {
      const { agent, other } = await h.sessionsOf(LEASE_WHO);
      const clock = h.clock;
      const started = await agent.ok("start_run", { process: "lease-probe", inputs: {} });
      const runId = started.run.id as string;
      const item = await agentItem(agent, runId, "work");
      const args = { ...item.claim.arguments, requestId: randomUUID() };
      const first = await agent.ok("claim", args);
      expect(await agentItem(other, runId, "work")).toBeUndefined();

      await clock.advance(LEASE);
      const replay = await agent.ok("claim", args);
      expect({ token: replay.token, expiresAt: replay.expiresAt }).toEqual({
        token: first.token,
        expiresAt: first.expiresAt,
      });
      expect(await agentItem(other, runId, "work")).toMatchObject({ handoff: null });
      const taken = await claimStep(other, runId, "work");
      expect(taken.token).not.toBe(first.token);
      const stale = await agent.write("submit", { token: first.token, output: {}, summary: "Done." });
      expect(stale.ok ? null : stale.error.code).toBe("stale");
      const done = await other.ok("submit", { token: taken.token, output: {}, summary: "Done." });
      expect(done.run).toMatchObject({ state: "ended", outcome: "done" });
    });
  });
}
