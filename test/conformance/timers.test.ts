import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DAY,
  HOUR,
  MANUAL_CLOCK_DEPLOYMENTS,
  MINUTE,
  processFolder,
  rfc3339,
  TestClock,
} from "../support/clock.ts";
import { type Deployment, REPO } from "../support/deploy.ts";
import type { McpSession } from "../support/mcp.ts";
import { agentItem, claimStep, decideStep, doStep, link, personEntry, stepOf } from "../support/walk.ts";

/**
 * Issue #5: every timed rule of the spec end to end over MCP, with the clock moved by the admin call
 * `baton clock advance` makes: `wait_until` (past, future, missing), `wait` (m/h/d), `wait_for` with
 * `timeout`/`on_timeout` racing `send_event`, and `due`. The conformance fixtures `blog-publication`
 * and `customer-offboarding` go through every timed path; the checklist items that involve waits,
 * time-outs and deadlines name themselves. Runs against `baton dev --clock manual` and against the
 * services on NATS/PostgreSQL sharing one manual clock.
 */

const fixture = (name: string) => join(REPO, "conformance/fixtures", name);
const iso = (ms: number) => new Date(ms).toISOString();

/** The review's employee onboarding (round 2, process 2), which waits for `startAt`. */
const R2_ONBOARDING = `
description: Complete HR, IT and hiring-manager onboarding for a new employee.
inputs:
  employeeRef: string
  manager: person
  startAt: datetime
  startDate: date
steps:
  - id: hr
    person: hr-team
    task: Complete the employment record and required checks in the HR system.
    output:
      recordRef: string
      checksComplete: boolean
    evidence: [link]
    next: it
  - id: it
    person: it-team
    task: Prepare the employee's account, required access and equipment.
    output:
      ticketRef: string
    evidence: [link]
    next: first_day
  - id: first_day
    wait_until: inputs.startAt
    next: manager
  - id: manager
    person: inputs.manager
    task: Welcome the employee and complete the first-day checklist.
    output:
      checklistRef: string
    evidence: [link]
    next: done
  - id: done
    finish: onboarded
`;

/** The review's customer offboarding (round 2, process 9): an event, a 3d time-out, a deletion date. */
const R2_OFFBOARDING = `
description: Cancel services, settle the final invoice and delete eligible customer data.
inputs:
  customerRef: string
  deleteAt: datetime
  retentionNote:
    type: string
    optional: true
steps:
  - id: cancel_services
    agent: Cancel customer services and prepare the final invoice. Submit both references.
    output:
      cancellationRef: string
      invoiceRef: string
    evidence: [link]
    next: finance
  - id: finance
    person: finance-team
    approve: Confirm the final invoice and authorize proceeding to settlement.
    next: settlement
  - id: settlement
    wait_for: final_settlement
    timeout: 3d
    on_timeout: resolve_settlement
    next: retention
  - id: resolve_settlement
    person: accounts-receivable
    task: Resolve settlement of the final invoice.
    output:
      settlementRef: string
    evidence: [link]
    next: retention
  - id: retention
    wait_until: inputs.deleteAt
    next: delete_data
  - id: delete_data
    agent: Delete only data eligible for deletion. Submit the report reference.
    output:
      deletionReportRef: string
    evidence: [link]
    next: done
  - id: done
    finish: offboarded
`;

const WAITS = `
description: Waits of each duration unit in a row, then an agent step.
steps:
  - id: half_hour
    wait: 30m
  - id: four_hours
    wait: 4h
  - id: three_days
    wait: 3d
  - id: work
    agent: Report that the waits are over.
  - id: done
    finish: waited
`;

const WAIT_UNTIL_OPTIONAL = `
description: Waits until an optional time, then an agent step.
inputs:
  notBefore: { type: datetime, optional: true }
steps:
  - id: hold
    wait_until: inputs.notBefore
  - id: work
    agent: Carry on.
  - id: done
    finish: ok
`;

const WAIT_FOR_DEFAULT = `
description: Waits an hour at most for a ping, then an agent step.
steps:
  - id: ping
    wait_for: ping
    timeout: 1h
  - id: after
    agent: Carry on, pinged or not.
  - id: done
    finish: ok
`;

const ZERO_WAIT = `
description: A wait of zero minutes, which means at once.
steps:
  - id: pause
    wait: 0m
  - id: work
    agent: Carry on.
  - id: done
    finish: ok
`;

describe.each(MANUAL_CLOCK_DEPLOYMENTS)("timers — %s", (_label, start) => {
  let baton: Deployment;
  let clock: TestClock;
  let agent: McpSession;
  let billing: McpSession;
  let editor: McpSession;
  let owner: McpSession;
  let collections: McpSession;
  let steward: McpSession;
  let finance: McpSession;
  let receivables: McpSession;
  let hr: McpSession;
  let it_: McpSession;
  let manager: McpSession;
  let leads: McpSession;

  beforeAll(async () => {
    baton = await start();
    clock = await TestClock.of(baton);
    await baton.publish(fixture("blog-publication"), { editor: "editors" });
    await baton.publish(fixture("customer-offboarding"), {
      "account-owner": "account-owners",
      "finance-collections": "collections",
      "data-steward": "stewards",
    });
    await baton.publish(fixture("major-incident-response"), {
      "operations-lead": "ops-leads",
      "security-lead": "sec-leads",
      "communications-lead": "comms-leads",
    });
    await baton.publish(processFolder("r2-employee-onboarding", R2_ONBOARDING), {
      "hr-team": "hr",
      "it-team": "it",
    });
    await baton.publish(processFolder("r2-customer-offboarding", R2_OFFBOARDING), {
      "finance-team": "finance",
      "accounts-receivable": "receivables",
    });
    await baton.publish(processFolder("timed-waits", WAITS));
    await baton.publish(processFolder("wait-until-optional", WAIT_UNTIL_OPTIONAL));
    await baton.publish(processFolder("wait-for-default", WAIT_FOR_DEFAULT));
    await baton.publish(processFolder("zero-wait", ZERO_WAIT));
    agent = await baton.session({ kind: "agent", id: "a_worker" });
    billing = await baton.session({ kind: "agent", id: "a_billing" });
    editor = await baton.session({ kind: "person", id: "eda@example.com", groups: ["editors"] });
    owner = await baton.session({ kind: "person", id: "owen@example.com", groups: ["account-owners"] });
    collections = await baton.session({ kind: "person", id: "cole@example.com", groups: ["collections"] });
    steward = await baton.session({ kind: "person", id: "stew@example.com", groups: ["stewards"] });
    finance = await baton.session({ kind: "person", id: "fin@example.com", groups: ["finance"] });
    receivables = await baton.session({ kind: "person", id: "ar@example.com", groups: ["receivables"] });
    hr = await baton.session({ kind: "person", id: "hr@example.com", groups: ["hr"] });
    it_ = await baton.session({ kind: "person", id: "it@example.com", groups: ["it"] });
    manager = await baton.session({ kind: "person", id: "manager@example.com" });
    leads = await baton.session({
      kind: "person",
      id: "lead@example.com",
      groups: ["ops-leads", "sec-leads", "comms-leads"],
    });
  });

  afterAll(async () => {
    const sessions = [agent, billing, editor, owner, collections, steward, finance, receivables, hr, it_];
    await Promise.all([...sessions, manager, leads].map((s) => s?.close()));
    await baton?.stop();
  });

  // ---------------------------------------------------------------- blog-publication

  async function blogToApproval(publishAt: string) {
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

  async function publish(runId: string) {
    const done = await doStep(agent, runId, "publish", {
      output: { url: "https://blog.example.com/launch", publishedRevision: "rev-2" },
      evidence: [link("https://blog.example.com/launch")],
    });
    expect(done.run).toMatchObject({ state: "ended", outcome: "published" });
    expect(done.run.ended).toMatchObject({ by: "server", note: null });
  }

  it("R1-7 blog-publication: a rejection returns to draft with the note current; a publishAt already past continues at once (C §3.1, §2.2 wait_until)", async () => {
    const now = await clock.now();
    const runId = await blogToApproval(rfc3339(now - HOUR));
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
    await publish(runId);
  });

  it("blog-publication: a publishAt in the future waits until the clock reaches it, then publish is ready at exactly that time (C §2.2 wait_until)", async () => {
    const now = await clock.now();
    const publishAt = now + 3 * DAY;
    const runId = await blogToApproval(rfc3339(publishAt, "+05:30"));
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
    await publish(runId);
  });

  it("blog-publication editor_review (due 2d): overdue once 2d pass, the item stays open and decidable; a repeat restarts the clock (C §2.2 due; checklist #72–#75)", async () => {
    const t0 = await clock.now();
    const runId = await blogToApproval(rfc3339(t0 - DAY));
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
    await publish(runId);
  });

  // ---------------------------------------------------------------- customer-offboarding

  async function offboardingToInvoice(effectiveAt: number) {
    const started = await owner.ok("start_run", {
      process: "customer-offboarding",
      inputs: { customerId: "CUS-9", effectiveAt: rfc3339(effectiveAt) },
    });
    const runId = started.run.id as string;
    expect(stepOf(started, "authorize")).toMatchObject({ state: "waiting", overdue: false });
    const authorized = await decideStep(owner, runId, "authorize", { decision: "approved" });
    return { runId, authorized };
  }

  async function cancelAndInvoice(runId: string, next: "settlement_event" | "deletion_clearance") {
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

  async function offboardingTail(runId: string) {
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

  const settled = (runId: string, data: Record<string, unknown>, requestId?: string) =>
    billing.call("send_event", {
      runId,
      name: "final-invoice-settled",
      data,
      requestId: requestId ?? crypto.randomUUID(),
    });

  it("R1-9 customer-offboarding: an effectiveAt already past continues at once; an early event is held and consumed when settlement_event becomes ready; the run ends offboarded (C §2.2, §3.6)", async () => {
    const now = await clock.now();
    const { runId, authorized } = await offboardingToInvoice(now - DAY);
    expect(stepOf(authorized, "effective_time").state).toBe("done");
    expect(authorized.data.steps.effective_time).toMatchObject({ by: "server", at: iso(now) });
    expect(stepOf(authorized, "cancel_services").state).toBe("ready");

    const early = await settled(runId, { invoiceId: "INV-9", paidAt: "2026-10-07" });
    expect(early).toEqual({ ok: true, data: { consumedBy: null } });

    const invoiced = await cancelAndInvoice(runId, "settlement_event");
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
    await offboardingTail(runId);
  });

  it("customer-offboarding: an effectiveAt in the future waits for it; an event after the wait is ready is consumed at once (C §2.2 wait_until, §3.6, tools.md send_event)", async () => {
    const now = await clock.now();
    const effectiveAt = now + 2 * DAY;
    const { runId, authorized } = await offboardingToInvoice(effectiveAt);
    expect(stepOf(authorized, "effective_time").state).toBe("waiting");
    expect(authorized.run.state).toBe("waiting");

    await clock.advance(DAY);
    expect(stepOf(await owner.ok("get_run", { runId }), "effective_time").state).toBe("waiting");
    await clock.advance(DAY);
    const view = await owner.ok("get_run", { runId });
    expect(view.data.steps.effective_time).toEqual({ by: "server", at: iso(effectiveAt), history: [] });
    expect(stepOf(view, "cancel_services").state).toBe("ready");

    const invoiced = await cancelAndInvoice(runId, "settlement_event");
    expect(stepOf(invoiced, "settlement_event").state).toBe("waiting");
    expect(await settled(runId, { invoiceId: "INV-9" })).toEqual({
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
    await offboardingTail(runId);
  });

  it("customer-offboarding: with no event for 30d settlement_event times out to on_timeout finance_followup; an event at the time-out instant is too late and is held (C §2.2 timeout/on_timeout; checklist #82, #83)", async () => {
    const { runId } = await offboardingToInvoice((await clock.now()) - HOUR);
    await cancelAndInvoice(runId, "settlement_event");
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
    expect(await settled(runId, { invoiceId: "INV-9" })).toEqual({ ok: true, data: { consumedBy: null } });

    await decideStep(collections, runId, "finance_followup", {
      decision: "completed",
      output: { settlementReference: "WO-9" },
      evidence: [link("https://ledger.example.com/wo-9")],
    });
    await offboardingTail(runId);
  });

  it("customer-offboarding: an event a minute before the time-out wins the race, and the time-out never fires afterwards (checklist #83)", async () => {
    const { runId } = await offboardingToInvoice((await clock.now()) - HOUR);
    await cancelAndInvoice(runId, "settlement_event");
    await clock.advance(30 * DAY - MINUTE);
    expect(await settled(runId, { invoiceId: "INV-9" })).toEqual({
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

  it("R2-9 customer offboarding (the review's process): an early event is consumed on approval, two early events are consumed oldest first, and 3d without one times out to resolve_settlement (C §3.6, §2.2)", async () => {
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

  it("R2-2 step 3 employee onboarding (the review's process): after startAt (a datetime with an offset) the manager's item appears, assigned to that person, and the run ends onboarded (C §2.2 wait_until, §3.4)", async () => {
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

  // ---------------------------------------------------------------- the rules on their own

  it("wait 30m, 4h and 3d each continue after their duration; one advance across several waits applies them all, each at its own time (C §2.2 wait, §2.4)", async () => {
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

  it("wait_until on a missing value fails the step with by: server and a note, ending the run failed (C §2.2, §3.5; checklist #76)", async () => {
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

  it("wait_for with a timeout and no on_timeout continues at the step's next when it passes (C §2.2; checklist #82)", async () => {
    const t0 = await clock.now();
    const started = await agent.ok("start_run", { process: "wait-for-default", inputs: {} });
    const runId = started.run.id as string;
    expect(stepOf(started, "ping").state).toBe("waiting");
    await clock.advance(HOUR);
    const view = await agent.ok("get_run", { runId });
    expect(view.data.steps.ping).toEqual({ by: "server", at: iso(t0 + HOUR), history: [] });
    expect(stepOf(view, "after").state).toBe("ready");
  });

  it("R1-10 major-incident-response (core only): one work item at a time, and each later step's due clock starts when it becomes ready (checklist #72)", async () => {
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

  // Found by the scheduler work: a timer a write creates already due (`wait: 0m`, `due: 0m`) must be
  // applied by that write (§4: a write returns only after every automatic transition it triggered).
  it("a wait of 0m continues within the write that reaches it (§4, §2.4; libs/process: 0m means at once)", async () => {
    const started = await agent.ok("start_run", { process: "zero-wait", inputs: {} });
    expect(stepOf(started, "pause").state).toBe("done");
    expect(stepOf(started, "work").state).toBe("ready");
  });
});
