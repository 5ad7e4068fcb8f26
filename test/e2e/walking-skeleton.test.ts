import { join } from "node:path";
import { type McpSession, refused } from "@baton/conformance/mcp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEPLOYMENTS, type Deployment, REPO } from "../support/deploy.ts";

/**
 * Issue #2's end-to-end suite: a real MCP SDK client over HTTP walks the quickstart
 * `expense-approval` (approve; reject → rework → approve) and `supplier-onboarding` (the decline
 * route with file evidence), against `baton dev` and against the services as separate processes.
 */
describe.each(DEPLOYMENTS)("walking skeleton — %s", (_label, start) => {
  let baton: Deployment;
  let agent: McpSession;
  let manager: McpSession;
  let employee: McpSession;

  beforeAll(async () => {
    baton = await start();
    await baton.publish(join(REPO, "fixtures/expense-approval"), { manager: "managers" });
    await baton.publish(join(REPO, "fixtures/supplier-onboarding"), { "finance-approver": "finance" });
    agent = await baton.session({ kind: "agent", id: "a_checker" });
    manager = await baton.session({ kind: "person", id: "mia@example.com", groups: ["managers"] });
    employee = await baton.session({ kind: "person", id: "sam@example.com" });
  });

  afterAll(async () => {
    await Promise.all([agent?.close(), manager?.close(), employee?.close()]);
    await baton?.stop();
  });

  const startExpense = () =>
    employee.ok("start_run", {
      process: "expense-approval",
      inputs: { employee: "sam@example.com", amount: 84.5, receiptUrl: "https://receipts.example.com/r/1" },
      mode: "test",
    });

  async function claimFor(runId: string, stepId: string) {
    const work = await agent.ok("get_work", { process: "expense-approval" });
    const item = work.items.find(
      (i: { runId: string; stepId: string }) => i.runId === runId && i.stepId === stepId,
    );
    expect(item, `get_work lists ${stepId} of ${runId}`).toBeDefined();
    return agent.ok("claim", { ...item.claim.arguments, requestId: crypto.randomUUID() });
  }

  async function managerItem(runId: string) {
    const inbox = await manager.ok("get_work", {});
    const entry = inbox.items.find((i: { runId: string }) => i.runId === runId);
    expect(entry, "the manager's inbox lists the approval").toBeDefined();
    return entry.workItem;
  }

  it("lists every tool with its argument schema and describes core-2 (tools.md describe)", async () => {
    const tools = await agent.tools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "cancel",
        "claim",
        "decide",
        "describe",
        "escalate",
        "get_run",
        "get_work",
        "list_processes",
        "list_runs",
        "renew",
        "send_event",
        "start_run",
        "submit",
        "upload",
      ].sort(),
    );
    const startRun = tools.find((t) => t.name === "start_run");
    expect(startRun?.inputSchema.required).toEqual(["process", "inputs", "requestId"]);
    const d = await agent.ok("describe");
    expect(d).toMatchObject({ protocol: "agentprocess", version: "core-2", person: { format: "email" } });
    const list = await agent.ok("list_processes");
    expect(list.items.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["expense-approval", "supplier-onboarding"]),
    );
    const expense = list.items.find((p: { name: string }) => p.name === "expense-approval");
    expect(expense.requires).toEqual({ systems: ["expense-tool"] });
  });

  it("a call that breaks the tool's schema is invalid with every issue, not a JSON-RPC error (ARCHITECTURE check order)", async () => {
    const r = await agent.call("start_run", { process: 7, inputs: [], extra: true });
    const error = refused(r, "invalid");
    expect(error.issues).toEqual(
      expect.arrayContaining([
        "process: expected string, got number",
        "inputs: expected object, got array",
        "requestId: required",
        "extra: not an argument of this tool",
      ]),
    );
  });

  it("expense-approval: the agent routes to approve, the manager approves, the run ends approved (quickstart)", async () => {
    const started = await startExpense();
    expect(started.run).toMatchObject({
      process: "expense-approval",
      state: "active",
      mode: "test",
      startedBy: "sam@example.com",
    });
    expect(started.steps[0]).toEqual({ id: "check_claim", kind: "agent", state: "ready" });
    const runId = started.run.id;

    const claim = await claimFor(runId, "check_claim");
    expect(claim).toMatchObject({
      mode: "test",
      handoff: null,
      step: { id: "check_claim", evidence: ["link"] },
    });
    expect(claim.step.next).toEqual([
      { to: "approve", when: "The receipt matches the claim and the policy allows it" },
      { to: "return_to_employee", when: "Anything does not match" },
    ]);
    expect(claim.body).toContain("# Expense approval");
    expect(claim.data.inputs.amount).toBe(84.5);

    const submitted = await agent.ok("submit", {
      token: claim.token,
      output: { matches: true, category: "travel" },
      evidence: [{ kind: "link", ref: "https://receipts.example.com/r/1" }],
      summary: "Receipt amount, date and merchant match; travel is within policy.",
      next: "approve",
      reason: "The receipt matches and the policy allows it.",
    });
    expect(submitted.run.state).toBe("waiting");
    expect(submitted.data.steps.check_claim).toMatchObject({
      next: "approve",
      by: "a_checker",
      output: { matches: true, category: "travel" },
    });
    expect(submitted.workItems).toHaveLength(1);
    expect(submitted.workItems[0]).toMatchObject({
      stepId: "approve",
      kind: "approve",
      assignedTo: { group: "managers" },
      mode: "test",
    });

    const item = await managerItem(runId);
    expect(item.decide.decisions).toEqual(["approved", "rejected", "failed"]);
    const decided = await manager.ok("decide", {
      ...item.decide.arguments,
      requestId: crypto.randomUUID(),
      decision: "approved",
    });
    expect(decided.run).toMatchObject({
      state: "ended",
      outcome: "approved",
      ended: { by: "server", note: null },
    });
    expect(decided.data.steps.approve).toMatchObject({ decision: "approved", by: "mia@example.com" });
    expect(decided.workItems).toEqual([]);
  });

  it("expense-approval: a rejection returns the run to check_claim with the note readable, then approval (§3.1)", async () => {
    const runId = (await startExpense()).run.id;
    const first = await claimFor(runId, "check_claim");
    await agent.ok("submit", {
      token: first.token,
      output: { matches: true, category: "meals" },
      evidence: [{ kind: "link", ref: "https://receipts.example.com/r/1" }],
      summary: "Looks right.",
      next: "approve",
      reason: "Matches.",
    });
    const item = await managerItem(runId);
    const rejected = await manager.ok("decide", {
      ...item.decide.arguments,
      requestId: crypto.randomUUID(),
      decision: "rejected",
      note: "The receipt is for a hotel, not meals.",
    });
    expect(rejected.run.state).toBe("active");
    expect(rejected.steps.find((s: { id: string }) => s.id === "check_claim").state).toBe("ready");
    expect(rejected.data.steps.approve).toMatchObject({
      decision: "rejected",
      note: "The receipt is for a hotel, not meals.",
    });

    const second = await claimFor(runId, "check_claim");
    expect(second.handoff).toBeNull();
    expect(second.data.steps.approve.note).toBe("The receipt is for a hotel, not meals.");
    await agent.ok("submit", {
      token: second.token,
      output: { matches: true, category: "travel" },
      evidence: [{ kind: "link", ref: "https://receipts.example.com/r/1" }],
      summary: "Recategorized as travel (hotel).",
      next: "approve",
      reason: "Matches as travel.",
    });
    const again = await managerItem(runId);
    const approved = await manager.ok("decide", {
      ...again.decide.arguments,
      requestId: crypto.randomUUID(),
      decision: "approved",
    });
    expect(approved.run).toMatchObject({ state: "ended", outcome: "approved" });
    const check = approved.data.steps.check_claim;
    expect(check.output.category).toBe("travel");
    expect(check.history).toHaveLength(1);
    expect(check.history[0].output.category).toBe("meals");
    expect(approved.data.steps.approve.history).toEqual([
      expect.objectContaining({ decision: "rejected", note: "The receipt is for a hotel, not meals." }),
    ]);
  });

  it("supplier-onboarding: file evidence and the decline route end the run declined (§2 example, §5)", async () => {
    const started = await agent.ok("start_run", {
      process: "supplier-onboarding",
      inputs: { vendorName: "Acme", amount: 48000 },
    });
    const runId = started.run.id;
    const upload = await agent.ok("upload", {
      fileName: "screening.txt",
      contentType: "text/plain",
      contentBase64: Buffer.from("OFAC: hit on Acme Holdings").toString("base64"),
    });
    expect(upload).toMatchObject({ bytes: 26, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const work = await agent.ok("get_work", { process: "supplier-onboarding" });
    const item = work.items.find((i: { runId: string }) => i.runId === runId);
    const claim = await agent.ok("claim", { ...item.claim.arguments, requestId: crypto.randomUUID() });
    const ended = await agent.ok("submit", {
      token: claim.token,
      output: { cleared: false, summary: "OFAC hit on Acme Holdings." },
      evidence: [{ kind: "file", ref: upload.id }],
      summary: "Screened both lists; OFAC has a hit on the parent company.",
      next: "decline",
      reason: "Sanctions hit.",
    });
    expect(ended.run).toMatchObject({
      state: "ended",
      outcome: "declined",
      ended: { by: "server", note: null },
    });
    const evidence = ended.data.steps.check_vendor.evidence[0];
    expect(evidence).toMatchObject({ kind: "file", ref: upload.id, sha256: upload.sha256 });
    const download = await fetch(evidence.url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe("OFAC: hit on Acme Holdings");
  });
});
