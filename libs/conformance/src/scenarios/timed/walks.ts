import { expect } from "vitest";
import { fixture, type Harness, type Identity, type Publication, suiteProcess } from "../../support.ts";
import { rfc3339 } from "../../time.ts";
import { decideStep, doStep, link, stepOf } from "../../walk.ts";

/**
 * What the timed scenarios share: the processes they need published (the fixtures with their roles
 * bound to groups of other names, so assignment to a bound group shows), the identities that act in
 * them, and the walks of `blog-publication` and `customer-offboarding` that several scenarios take to
 * reach the step whose time they move.
 */

/** Who acts in the waits, time-outs and deadlines of the fixtures. */
export const WHO = {
  agent: { kind: "agent", id: "a_worker" },
  billing: { kind: "agent", id: "a_billing" },
  editor: { kind: "person", id: "eda@example.com", groups: ["editors"] },
  owner: { kind: "person", id: "owen@example.com", groups: ["account-owners"] },
  collections: { kind: "person", id: "cole@example.com", groups: ["collections"] },
  steward: { kind: "person", id: "stew@example.com", groups: ["stewards"] },
  finance: { kind: "person", id: "fin@example.com", groups: ["finance"] },
  receivables: { kind: "person", id: "ar@example.com", groups: ["receivables"] },
  hr: { kind: "person", id: "hr@example.com", groups: ["hr"] },
  it_: { kind: "person", id: "it@example.com", groups: ["it"] },
  manager: { kind: "person", id: "manager@example.com" },
  leads: { kind: "person", id: "lead@example.com", groups: ["ops-leads", "sec-leads", "comms-leads"] },
} as const satisfies Record<string, Identity>;

/** Who acts in the lease and agent-deadline scenarios. */
export const LEASE_WHO = {
  agent: { kind: "agent", id: "a_analyst" },
  other: { kind: "agent", id: "a_second" },
  buyer: { kind: "person", id: "buyer@example.com", groups: ["buyers"] },
  procurement: { kind: "person", id: "pm@example.com", groups: ["procurement"] },
  employee: { kind: "person", id: "sam@example.com" },
  manager: { kind: "person", id: "manager@example.com" },
  payables: { kind: "person", id: "ap@example.com", groups: ["payables"] },
  operator: { kind: "person", id: "ops@example.com", operator: true },
  lead: { kind: "person", id: "lead@example.com", groups: ["leads"] },
  incidentOwner: { kind: "person", id: "owner@example.com" },
} as const satisfies Record<string, Identity>;

/** Every process a timed scenario runs, with its bindings. */
export const TIMED_PUBLICATIONS: Publication[] = [
  { folder: fixture("blog-publication"), bindings: { editor: "editors" } },
  {
    folder: fixture("customer-offboarding"),
    bindings: {
      "account-owner": "account-owners",
      "finance-collections": "collections",
      "data-steward": "stewards",
    },
  },
  {
    folder: fixture("major-incident-response"),
    bindings: {
      "operations-lead": "ops-leads",
      "security-lead": "sec-leads",
      "communications-lead": "comms-leads",
    },
  },
  { folder: suiteProcess("r2-employee-onboarding"), bindings: { "hr-team": "hr", "it-team": "it" } },
  {
    folder: suiteProcess("r2-customer-offboarding"),
    bindings: { "finance-team": "finance", "accounts-receivable": "receivables" },
  },
  { folder: suiteProcess("timed-waits") },
  { folder: suiteProcess("wait-until-optional") },
  { folder: suiteProcess("wait-for-default") },
  { folder: suiteProcess("zero-wait") },
  {
    folder: fixture("supplier-rfp"),
    bindings: { "procurement-buyer": "buyers", "procurement-manager": "procurement" },
  },
  { folder: fixture("expense-reimbursement"), bindings: { "accounts-payable": "payables" } },
  { folder: fixture("incident-postmortem") },
  { folder: suiteProcess("due-agent"), bindings: { leads: "leads" } },
  { folder: suiteProcess("lease-probe") },
];

// ---------------------------------------------------------------- blog-publication

/** Starts a blog post with `publishAt` and submits the draft; returns the run id, its review open. */
export async function blogToApproval(h: Harness, publishAt: string) {
  const { agent } = await h.sessionsOf(WHO);
  const started = await agent.ok("start_run", {
    process: "blog-publication",
    inputs: { brief: "Launch post", slug: "launch", publishAt },
  });
  const runId = started.run.id as string;
  const drafted = await doStep(agent, runId, "draft", {
    output: { revision: "rev-1", title: "We launched", summary: "What is new." },
    evidence: [link("https://cms.example.com/preview/rev-1")],
  });
  expect(stepOf(drafted, "editor_review").state).toBe("waiting");
  return runId;
}

/** Publishes the post: the run ends `published`. */
export async function publish(h: Harness, runId: string) {
  const { agent } = await h.sessionsOf(WHO);
  const done = await doStep(agent, runId, "publish", {
    output: { url: "https://blog.example.com/launch", publishedRevision: "rev-2" },
    evidence: [link("https://blog.example.com/launch")],
  });
  expect(done.run).toMatchObject({ state: "ended", outcome: "published" });
  expect(done.run.ended).toMatchObject({ by: "server", note: null });
}

// ---------------------------------------------------------------- customer-offboarding

/** Starts an offboarding effective at `effectiveAt` (epoch ms) and authorizes it. */
export async function offboardingToInvoice(h: Harness, effectiveAt: number) {
  const { owner } = await h.sessionsOf(WHO);
  const started = await owner.ok("start_run", {
    process: "customer-offboarding",
    inputs: { customerId: "CUS-9", effectiveAt: rfc3339(effectiveAt) },
  });
  const runId = started.run.id as string;
  expect(stepOf(started, "authorize")).toMatchObject({ state: "waiting", overdue: false });
  const authorized = await decideStep(owner, runId, "authorize", { decision: "approved" });
  return { runId, authorized };
}

/** Cancels the services and submits the final invoice, routed to `next`; returns the run view. */
export async function cancelAndInvoice(
  h: Harness,
  runId: string,
  next: "settlement_event" | "deletion_clearance",
) {
  const { agent } = await h.sessionsOf(WHO);
  await doStep(agent, runId, "cancel_services", {
    output: { cancellationIds: ["SUB-1", "SUB-2"] },
    evidence: [link("https://billing.example.com/cus-9")],
  });
  return doStep(agent, runId, "final_invoice", {
    output: { invoiceId: "INV-9", balance: 120.5, currency: "EUR" },
    evidence: [link("https://billing.example.com/inv-9")],
    next,
    reason: next === "settlement_event" ? "A balance of 120.50 EUR is open." : "Settled.",
  });
}

/** Clears, deletes and verifies the deletion: the run ends `offboarded` with no open item. */
export async function offboardingTail(h: Harness, runId: string) {
  const { agent, steward } = await h.sessionsOf(WHO);
  await decideStep(steward, runId, "deletion_clearance", {
    decision: "completed",
    output: { deletionScope: "CRM and support data", retentionExceptions: "Invoices kept 10 years" },
    evidence: [link("https://inventory.example.com/cus-9")],
  });
  await doStep(agent, runId, "delete_data", {
    output: { deletionReceipts: ["crm:DEL-1", "support:DEL-2"] },
    evidence: [link("https://inventory.example.com/cus-9/receipts")],
  });
  const ended = await decideStep(steward, runId, "verify_deletion", {
    decision: "completed",
    output: { completionStatement: "Your data was deleted; invoices are retained as required." },
    evidence: [link("https://crm.example.com/cus-9/statement")],
  });
  expect(ended.run).toMatchObject({ state: "ended", outcome: "offboarded" });
  expect(ended.workItems).toEqual([]);
}

/** The billing agent's `final-invoice-settled` event for `runId`; the raw result. */
export async function settled(h: Harness, runId: string, data: Record<string, unknown>, requestId?: string) {
  const { billing } = await h.sessionsOf(WHO);
  return billing.call("send_event", {
    runId,
    name: "final-invoice-settled",
    data,
    requestId: requestId ?? crypto.randomUUID(),
  });
}
