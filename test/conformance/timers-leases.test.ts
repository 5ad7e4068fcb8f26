import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, HOUR, MANUAL_CLOCK_DEPLOYMENTS, MINUTE, processFolder, TestClock } from "../support/clock.ts";
import { type Deployment, type DistributedDeployment, REPO } from "../support/deploy.ts";
import { journalOf, listenEvents, timersOf } from "../support/journal.ts";
import { type McpSession, withoutUrls } from "../support/mcp.ts";
import { agentItem, claimStep, decideStep, doStep, link, personEntry, stepOf } from "../support/walk.ts";

/**
 * Issue #5: leases and deadlines end to end over MCP with the clock moved by the admin call. Lease
 * expiry makes a step claimable at once with `handoff.progress` (R2-6), a lost `submit` or `claim`
 * replayed after its lease ended returns the original result (R2-5, R3-3a, checklist #52), and `due`
 * marks work overdue in `get_run` and `get_work` without closing it — a repeat restarts the clock,
 * `returned` does not (R2-8, checklist #72–#75). On NATS the overdue event reaches the bus and the
 * journal shows each fired timer in exactly one transition's `detail.timers`.
 */

const fixture = (name: string) => join(REPO, "conformance/fixtures", name);
const iso = (ms: number) => new Date(ms).toISOString();
/** describe.leaseSeconds of both deployments (DEFAULTS.leaseSeconds). */
const LEASE = 10 * MINUTE;

const DUE_AGENT = `
description: An agent step with a deadline, checked by a lead who may send it back.
steps:
  - id: triage
    agent: Triage the request and give a verdict.
    output:
      verdict: string
    due: 1h
  - id: review
    person: leads
    approve: Check the triage.
    on_reject: triage
  - id: done
    finish: triaged
`;

const LEASE_PROBE = `
description: One agent step, for leases.
steps:
  - id: work
    agent: Do the work.
  - id: done
    finish: done
`;

describe.each(MANUAL_CLOCK_DEPLOYMENTS)("leases and deadlines — %s", (label, start) => {
  // The bus and the timers table exist only in the distributed deployment; those tests are defined only there.
  const distributedOnly = label.startsWith("distributed") ? it : () => undefined;
  let baton: Deployment;
  let clock: TestClock;
  let agent: McpSession;
  let other: McpSession;
  let buyer: McpSession;
  let procurement: McpSession;
  let employee: McpSession;
  let manager: McpSession;
  let payables: McpSession;
  let operator: McpSession;
  let lead: McpSession;
  let incidentOwner: McpSession;

  beforeAll(async () => {
    baton = await start();
    clock = await TestClock.of(baton);
    await baton.publish(fixture("supplier-rfp"), {
      "procurement-buyer": "buyers",
      "procurement-manager": "procurement",
    });
    await baton.publish(fixture("expense-reimbursement"), { "accounts-payable": "payables" });
    await baton.publish(fixture("incident-postmortem"));
    await baton.publish(processFolder("due-agent", DUE_AGENT), { leads: "leads" });
    await baton.publish(processFolder("lease-probe", LEASE_PROBE));
    agent = await baton.session({ kind: "agent", id: "a_analyst" });
    other = await baton.session({ kind: "agent", id: "a_second" });
    buyer = await baton.session({ kind: "person", id: "buyer@example.com", groups: ["buyers"] });
    procurement = await baton.session({ kind: "person", id: "pm@example.com", groups: ["procurement"] });
    employee = await baton.session({ kind: "person", id: "sam@example.com" });
    manager = await baton.session({ kind: "person", id: "manager@example.com" });
    payables = await baton.session({ kind: "person", id: "ap@example.com", groups: ["payables"] });
    operator = await baton.session({ kind: "person", id: "ops@example.com", operator: true });
    lead = await baton.session({ kind: "person", id: "lead@example.com", groups: ["leads"] });
    incidentOwner = await baton.session({ kind: "person", id: "owner@example.com" });
  });

  afterAll(async () => {
    const sessions = [agent, other, buyer, procurement, employee, manager, payables, operator, lead];
    await Promise.all([...sessions, incidentOwner].map((s) => s?.close()));
    await baton?.stop();
  });

  it("describe advertises the lease these tests move past (tools.md describe)", async () => {
    expect((await agent.ok("describe")).leaseSeconds * 1000).toBe(LEASE);
  });

  it("R2-6 supplier-rfp: renew makes the old token stale; after the lease ends a submit is stale, get_work lists the step at once with handoff.progress, and the next claim carries it (C §3.3, tools.md renew)", async () => {
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

  it("R2-5 / R3-3a expense-reimbursement: a submit replayed with its requestId after the lease ended returns the original run view and completes nothing twice; other arguments are a conflict (C §3.3, §4)", async () => {
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

  it("checklist #41 #52: when a lease ends the step is claimable at once by anyone; the lost claim replayed returns the original token and expiresAt, and that token is stale (C §3.3, tools.md claim)", async () => {
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

  it("due on an agent step: overdue shows in get_work and get_run once it passes; an escalation returned by a person does not restart the clock (C §2.2 due, §3.4 returned; checklist #73)", async () => {
    const t0 = await clock.now();
    const started = await agent.ok("start_run", { process: "due-agent", inputs: {} });
    const runId = started.run.id as string;
    expect(stepOf(started, "triage")).toEqual({
      id: "triage",
      kind: "agent",
      state: "ready",
      due: iso(t0 + HOUR),
      overdue: false,
    });
    expect(await agentItem(agent, runId, "triage")).toMatchObject({ due: iso(t0 + HOUR), overdue: false });

    const claim = await claimStep(agent, runId, "triage");
    await clock.advance(5 * MINUTE);
    const escalated = await agent.ok("escalate", {
      token: claim.token,
      note: "The request has no intake form.",
    });
    expect(escalated.workItems[0]).toMatchObject({ stepId: "triage", due: iso(t0 + HOUR) });
    const returned = await decideStep(operator, runId, "triage", {
      decision: "returned",
      note: "Use the intake form attached to the ticket.",
    });
    expect(stepOf(returned, "triage")).toMatchObject({ state: "ready", due: iso(t0 + HOUR), overdue: false });
    expect(await agentItem(agent, runId, "triage")).toMatchObject({
      due: iso(t0 + HOUR),
      overdue: false,
      handoff: { returned: { note: "Use the intake form attached to the ticket.", by: "ops@example.com" } },
    });

    await clock.advance(54 * MINUTE);
    expect(await agentItem(agent, runId, "triage")).toMatchObject({ due: iso(t0 + HOUR), overdue: false });
    await clock.advance(MINUTE);
    expect(await agentItem(agent, runId, "triage")).toMatchObject({ due: iso(t0 + HOUR), overdue: true });
    expect(stepOf(await agent.ok("get_run", { runId }), "triage")).toMatchObject({
      state: "ready",
      overdue: true,
    });
    // Overdue work stays open: still claimable and completable.
    const done = await doStep(agent, runId, "triage", { output: { verdict: "bug" } });
    expect(stepOf(done, "triage").state).toBe("done");
    expect(stepOf(done, "review").state).toBe("waiting");
  });

  it("due on an agent step restarts when the step is repeated through on_reject (C §2.2 due: a repeat restarts the clock; checklist #73)", async () => {
    const t0 = await clock.now();
    const started = await agent.ok("start_run", { process: "due-agent", inputs: {} });
    const runId = started.run.id as string;
    await doStep(agent, runId, "triage", { output: { verdict: "question" } });
    await clock.advance(2 * HOUR);
    const rejected = await decideStep(lead, runId, "review", { decision: "rejected", note: "It is a bug." });
    expect(stepOf(rejected, "triage")).toMatchObject({
      state: "ready",
      due: iso(t0 + 3 * HOUR),
      overdue: false,
    });
    expect(await agentItem(agent, runId, "triage")).toMatchObject({
      due: iso(t0 + 3 * HOUR),
      overdue: false,
    });
    await clock.advance(HOUR);
    expect(await agentItem(agent, runId, "triage")).toMatchObject({ overdue: true });
  });

  it("R2-8 incident-postmortem: a rejected review comes back with a restarted due; track_closure (due 30d) turns overdue and stays open and completable (C §2.2 due; checklist #54, #75)", async () => {
    const t0 = await clock.now();
    const started = await incidentOwner.ok("start_run", {
      process: "incident-postmortem",
      inputs: { incidentId: "INC-8", incidentOwner: "owner@example.com" },
    });
    const runId = started.run.id as string;
    const report = {
      output: {
        report: "Timeline, impact and factors.",
        proposedActions: [{ action: "Add alerting", owner: "ana@example.com", due: "2026-11-01" }],
      },
      evidence: [link("https://wiki.example.com/inc-8")],
    };
    const drafted = await doStep(agent, runId, "draft", report);
    expect(stepOf(drafted, "review")).toMatchObject({
      state: "waiting",
      due: iso(t0 + 5 * DAY),
      overdue: false,
    });

    await clock.advance(4 * DAY);
    const rejected = await decideStep(incidentOwner, runId, "review", {
      decision: "rejected",
      note: "Each action needs a completion criterion.",
    });
    expect(rejected.workItems).toEqual([]);
    await doStep(agent, runId, "draft", report);
    let view = await incidentOwner.ok("get_run", { runId });
    expect(view.workItems).toHaveLength(1);
    expect(view.workItems[0]).toMatchObject({ stepId: "review", due: iso(t0 + 9 * DAY) });
    await clock.advance(2 * DAY); // past the first review's deadline, not the repeat's
    view = await incidentOwner.ok("get_run", { runId });
    expect(stepOf(view, "review")).toMatchObject({ due: iso(t0 + 9 * DAY), overdue: false });

    await decideStep(incidentOwner, runId, "review", { decision: "approved" });
    const registered = await doStep(agent, runId, "register_actions", {
      output: { actionIds: ["ACT-1"], trackerView: "https://tracker.example.com/inc-8" },
      evidence: [link("https://tracker.example.com/inc-8")],
    });
    const t1 = t0 + 6 * DAY;
    expect(stepOf(registered, "track_closure")).toMatchObject({ due: iso(t1 + 30 * DAY), overdue: false });

    await clock.advance(30 * DAY);
    view = await incidentOwner.ok("get_run", { runId });
    expect(stepOf(view, "track_closure")).toMatchObject({ state: "waiting", overdue: true });
    expect(view.run.state).toBe("waiting");
    expect((await personEntry(incidentOwner, runId, "track_closure"))?.workItem.due).toBe(iso(t1 + 30 * DAY));
    const closed = await decideStep(incidentOwner, runId, "track_closure", {
      decision: "completed",
      output: {
        closures: [{ actionId: "ACT-1", issue: "OPS-1", evidence: "https://tracker.example.com/ops-1" }],
        closureSummary: "The one action is closed with evidence.",
      },
      evidence: [link("https://tracker.example.com/inc-8")],
    });
    expect(closed.run).toMatchObject({ state: "ended", outcome: "closed" });
  });

  distributedOnly(
    "on NATS: the overdue event reaches the bus as events.<org>.step.overdue, once per attempt, and every fired timer is in exactly one journal entry's detail.timers (C §2.2 due; ARCHITECTURE outbox)",
    async () => {
      const d = baton as DistributedDeployment;
      const tap = await listenEvents(d.namespace, "events.*.step.overdue");
      try {
        const t0 = await clock.now();
        const started = await agent.ok("start_run", { process: "due-agent", inputs: {}, mode: "test" });
        const runId = started.run.id as string;
        const claim = await claimStep(agent, runId, "triage");
        await clock.advance(LEASE); // the lease ends: one tick
        await clock.advance(HOUR - LEASE); // due passes: one tick, one overdue event
        const heard = await tap.next((e) => e.data.runId === runId);
        expect(heard.subject).toBe("events.default.step.overdue");
        expect(heard.data).toMatchObject({
          type: "step.overdue",
          runId,
          org: "default",
          mode: "test",
          stepId: "triage",
          at: t0 + HOUR,
          detail: { due: iso(t0 + HOUR) },
        });
        await clock.advance(DAY); // nothing more is due for this attempt

        const journal = await journalOf(d.databaseUrl, [runId]);
        expect(journal.map((r) => r.command)).toEqual(["start_run", "claim", "tick", "tick"]);
        expect(journal.filter((r) => r.command === "tick").every((r) => r.actor === "server")).toBe(true);
        // Fired timers are counted from what each transition applied (`detail.timers`), not from
        // the number of tick rows: each timer is in exactly one entry, at its own fire time.
        expect(journal.map((r) => r.timers)).toEqual([
          [],
          [],
          [{ kind: "lease", stepId: "triage", at: iso(t0 + LEASE) }],
          [{ kind: "due", stepId: "triage", at: iso(t0 + HOUR) }],
        ]);
        const overdue = journal.flatMap((r) => r.events).filter((e) => e.type === "step.overdue");
        expect(overdue).toHaveLength(1);
        const stale = await agent.write("submit", {
          token: claim.token,
          output: { verdict: "x" },
          summary: "x",
        });
        expect(stale.ok ? null : stale.error.code).toBe("stale");
      } finally {
        await tap.close();
      }
    },
  );

  distributedOnly(
    "on PostgreSQL: a run's timers are written with its transitions and cancelled with the run (issue #5 durable timers)",
    async () => {
      const d = baton as DistributedDeployment;
      const started = await agent.ok("start_run", { process: "due-agent", inputs: {} });
      const runId = started.run.id as string;
      expect((await timersOf(d.databaseUrl, [runId])).map((t) => t.kind)).toEqual(["due"]);
      await claimStep(agent, runId, "triage");
      expect((await timersOf(d.databaseUrl, [runId])).map((t) => t.kind)).toEqual(["due", "lease"]);
      const cancelled = await operator.ok("cancel", { runId, reason: "Duplicate request." });
      expect(cancelled.run.state).toBe("cancelled");
      expect(await timersOf(d.databaseUrl, [runId])).toEqual([]);
      await clock.advance(DAY);
      expect((await journalOf(d.databaseUrl, [runId])).map((r) => r.command)).toEqual([
        "start_run",
        "claim",
        "cancel",
      ]);
    },
  );
});
