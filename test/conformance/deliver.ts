import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type McpSession, type Result, withoutUrls } from "../support/mcp.ts";
import { type Data, type Harness, PROCESSES_DIR, refused, rid, statesOf } from "./support.ts";

/**
 * One scenario per numbered point of issue #4's Deliver list, over MCP. Scenarios that need their own
 * organization (paging, idempotency scope) publish into it, so other scenarios' runs never show.
 */
export function deliverScenarios(h: Harness): void {
  describe("issue #4 deliver", () => {
    /** A drafting run with its draft submitted: the editor's review is open. */
    async function inReview(agentId: string, editorId: string) {
      const agent = await h.agent(agentId);
      const editor = await h.person(editorId, ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id as string;
      await h.work(agent, runId, "draft", { revision: "r1" });
      return { agent, editor, runId };
    }

    it("1. decide checks run_ended → already_decided → not_found → stale → forbidden → invalid (decision and argument combinations) → not_accepted, each pinned where the next would also apply (tools.md decide)", async () => {
      const { agent, editor, runId } = await inReview("a_d1", "ed_d1@example.com");
      const outsider = await h.person("out_d1@example.com", ["sales"]);
      const first = await h.workItem(editor, runId, "editor_review");
      const call = (who: McpSession, item: Data, snapshot: string, extra: Record<string, unknown> = {}) =>
        who.write("decide", { ...item.decide.arguments, snapshot, decision: "approved", ...extra });
      const unknown = { decide: { arguments: { runId, workItemId: "w_999" } } };
      // decide's combination rules are the engine's, after forbidden and before not_accepted, so every
      // check before them is pinned with a combination that would also be invalid: next with approved,
      // a rejection without its note, completed on an approval.
      const nextWithApproved = { next: "done", reason: "x" };
      const noNote = { decision: "rejected" };
      const completedOnApproval = { decision: "completed", output: {} };

      // already_decided before not_found, stale, forbidden and invalid: an agent and an outsider with a
      // stale snapshot and a bad combination on a decided item.
      await h.decided(editor, runId, "editor_review", "rejected", { note: "Again." });
      refused(await call(agent, first, "0".repeat(64), nextWithApproved), "conflict", ["already_decided"]);
      refused(await call(outsider, first, first.snapshot, noNote), "conflict", ["already_decided"]);
      // not_found before stale, forbidden and invalid.
      refused(await call(agent, unknown, "stale", nextWithApproved), "not_found");
      await h.work(agent, runId, "draft", { revision: "r2" });
      const second = await h.workItem(editor, runId, "editor_review");
      // stale before forbidden and invalid: the literal order pins stale for an agent with a stale snapshot.
      refused(await call(agent, second, first.snapshot, nextWithApproved), "stale");
      refused(await call(outsider, second, first.snapshot, noNote), "stale");
      refused(await call(editor, second, first.snapshot, completedOnApproval), "stale");
      // forbidden before invalid, with a current snapshot: an agent identity, a person outside the assignment.
      for (const bad of [nextWithApproved, noNote, completedOnApproval]) {
        refused(await call(agent, second, second.snapshot, bad), "forbidden");
        refused(await call(outsider, second, second.snapshot, bad), "forbidden");
      }
      // The assignee gets invalid for each: the decision allowed on the item, then the combinations.
      expect(
        refused(await call(editor, second, second.snapshot, nextWithApproved), "invalid").issues,
      ).toEqual([
        'next: only with decision "completed", not "approved"',
        'reason: only with decision "completed", not "approved"',
      ]);
      expect(refused(await call(editor, second, second.snapshot, noNote), "invalid").issues).toEqual([
        'note: required with decision "rejected"',
      ]);
      expect(
        refused(await call(editor, second, second.snapshot, completedOnApproval), "invalid").issues,
      ).toEqual(["decision: must be one of approved, rejected, failed"]);

      // forbidden, then invalid, before not_accepted: on a task, a completion whose output would be
      // not_accepted is forbidden for an agent and an outsider, invalid with a note for the assignee.
      const hr = await h.person("hr_d1@example.com", ["hr-operations"]);
      const onboarding = (
        await hr.ok("start_run", {
          process: "employee-onboarding",
          inputs: {
            employeeId: "E-d1",
            employeeName: "N",
            startDate: "2026-12-01",
            hiringManager: "hm@example.com",
          },
        })
      ).run.id;
      const task = await h.workItem(hr, onboarding, "hr_setup");
      const badOutput = { decision: "completed", output: { hrisRecord: 7 } };
      refused(await call(agent, task, task.snapshot, badOutput), "forbidden");
      refused(await call(outsider, task, task.snapshot, badOutput), "forbidden");
      expect(
        refused(await call(hr, task, task.snapshot, { ...badOutput, note: "x" }), "invalid").issues,
      ).toEqual(['note: not with decision "completed"; put what you did in summary']);
      expect(refused(await call(hr, task, task.snapshot, badOutput), "not_accepted").issues).toEqual(
        expect.arrayContaining(["output.hrisRecord: expected string", "output.location: missing"]),
      );

      // The decision ends the run; afterwards run_ended comes before everything, even already_decided,
      // and before every combination.
      await h.decided(editor, runId, "editor_review", "approved");
      refused(await call(agent, second, "stale", nextWithApproved), "conflict", ["run_ended"]);
      refused(await call(editor, second, second.snapshot, noNote), "conflict", ["run_ended"]);
      refused(await call(outsider, first, first.snapshot, completedOnApproval), "conflict", ["run_ended"]);
      refused(await call(editor, unknown, "x", nextWithApproved), "conflict", ["run_ended"]);
    });

    it("1. claim: claimed_by_you, claimed_by_other, not_ready; forbidden for a person and for a non-agent step; cancel forbidden for an agent and a non-operator (tools.md claim, cancel)", async () => {
      const a = await h.agent("a_d1c");
      const b = await h.agent("b_d1c");
      const editor = await h.person("ed_d1c@example.com", ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      refused(await editor.write("claim", { runId, stepId: "draft" }), "forbidden");
      refused(await a.write("claim", { runId, stepId: "editor_review" }), "forbidden");
      refused(await a.write("claim", { runId, stepId: "no_such_step" }), "not_found");
      refused(await a.write("claim", { runId: "r_doesnotexist", stepId: "draft" }), "not_found");
      const claim = await h.claim(a, runId, "draft");
      refused(await a.write("claim", { runId, stepId: "draft" }), "conflict", ["claimed_by_you"]);
      refused(await b.write("claim", { runId, stepId: "draft" }), "conflict", ["claimed_by_other"]);
      await a.ok("submit", { token: claim.token, output: { revision: "r" }, summary: "x" });
      refused(await b.write("claim", { runId, stepId: "draft" }), "conflict", ["not_ready"]);
      refused(await a.write("cancel", { runId, reason: "x" }), "forbidden");
      refused(await editor.write("cancel", { runId, reason: "x" }), "forbidden");
    });

    it("1. tokens: invalid when it does not verify; stale when its lease ended (submitted, escalated) or was replaced (renewed); run_ended first on an ended run (§3.3, §4.3, §6 rule 2)", async () => {
      const agent = await h.agent("a_d1t");
      const editor = await h.person("ed_d1t@example.com", ["editor"]);
      const ops = await h.operator();
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "draft");
      const submit = (token: string) =>
        agent.write("submit", { token, output: { revision: "r" }, summary: "x" });
      for (const bad of [
        "not-a-token",
        `${claim.token}x`,
        claim.token.replace(/.$/, (c: string) => (c === "A" ? "B" : "A")),
      ]) {
        refused(await submit(bad), "invalid");
        refused(await agent.write("renew", { token: bad }), "invalid");
        refused(await agent.write("escalate", { token: bad, note: "x" }), "invalid");
      }
      const renewed = await agent.ok("renew", { token: claim.token });
      refused(await submit(claim.token), "stale");
      await agent.ok("escalate", { token: renewed.token, note: "Blocked." });
      refused(await submit(renewed.token), "stale");
      await h.decided(ops, runId, "draft", "returned", { note: "Go on." });
      const again = await h.claim(agent, runId, "draft");
      await agent.ok("submit", { token: again.token, output: { revision: "r" }, summary: "x" });
      refused(await submit(again.token), "stale");
      await ops.ok("cancel", { runId, reason: "Done testing." });
      refused(await submit(again.token), "conflict", ["run_ended"]);
      refused(await agent.write("renew", { token: again.token }), "conflict", ["run_ended"]);
      refused(await agent.write("escalate", { token: again.token, note: "x" }), "conflict", ["run_ended"]);
      refused(await agent.write("claim", { runId, stepId: "draft" }), "conflict", ["run_ended"]);
      refused(await agent.write("send_event", { runId, name: "x" }), "conflict", ["run_ended"]);
    });

    it("1. decide argument combinations: next/reason only with completed; note never with completed; output/evidence/summary only with completed; next on a scalar-next task is not_accepted (tools.md decide, §3.2)", async () => {
      const { editor, runId } = await inReview("a_d1x", "ed_d1x@example.com");
      const item = await h.workItem(editor, runId, "editor_review");
      const decide = (extra: Record<string, unknown>) =>
        editor.write("decide", { ...item.decide.arguments, ...extra });
      expect(
        refused(await decide({ decision: "approved", next: "done", reason: "x" }), "invalid").issues,
      ).toEqual([
        'next: only with decision "completed", not "approved"',
        'reason: only with decision "completed", not "approved"',
      ]);
      expect(
        refused(
          await decide({
            decision: "rejected",
            note: "x",
            output: {},
            evidence: [{ kind: "link", ref: "x" }],
            summary: "s",
          }),
          "invalid",
        ).issues,
      ).toEqual([
        'output: only with decision "completed", not "rejected"',
        'evidence: only with decision "completed", not "rejected"',
        'summary: only with decision "completed", not "rejected"',
      ]);
      expect(refused(await decide({ decision: "rejected" }), "invalid").issues).toEqual([
        'note: required with decision "rejected"',
      ]);
      expect(refused(await decide({ decision: "completed", output: {} }), "invalid").issues).toEqual([
        "decision: must be one of approved, rejected, failed",
      ]);
      const hr = await h.person("hr_d1x@example.com", ["hr-operations"]);
      const onboarding = (
        await hr.ok("start_run", {
          process: "employee-onboarding",
          inputs: {
            employeeId: "E-1x",
            employeeName: "N",
            startDate: "2026-12-01",
            hiringManager: "hm@example.com",
          },
        })
      ).run.id;
      const task = await h.workItem(hr, onboarding, "hr_setup");
      const complete = (extra: Record<string, unknown>) =>
        hr.write("decide", {
          ...task.decide.arguments,
          decision: "completed",
          output: { hrisRecord: "H", location: "L", jobTitle: "J" },
          evidence: [{ kind: "link", ref: "https://hris" }],
          ...extra,
        });
      expect(refused(await complete({ note: "x" }), "invalid").issues).toEqual([
        'note: not with decision "completed"; put what you did in summary',
      ]);
      refused(await complete({ next: "access_plan", reason: "x" }), "not_accepted", [
        "next: not accepted; this step's next is not a list",
        "reason: not accepted; this step's next is not a list",
      ]);
      expect((await complete({ summary: "Checked the HRIS." })).ok).toBe(true);
    });

    it("2. run data and states: by/at on every completion (agent, person, event sender, server), a server-failed step, history and rework through on_reject, terminal clean-up (§3.1, §3.5)", async () => {
      const agent = await h.agent("a_d2");
      const sender = await h.agent("a_d2_sender");
      const reviewer = await h.person("rev_d2@example.com", ["reviewer"]);
      const runId = (await reviewer.ok("start_run", { process: "event-review", inputs: {} })).run.id;
      await h.work(agent, runId, "prepare", {});
      const consumed = await sender.ok("send_event", {
        runId,
        name: "proof_received",
        data: { ref: "POD-1" },
      });
      expect(consumed).toEqual({ consumedBy: "proof" });
      const rejectedView = await reviewer.ok("get_run", { runId });
      expect(rejectedView.data.steps.prepare).toMatchObject({
        output: {},
        evidence: [],
        summary: "Did prepare.",
        by: "a_d2",
        history: [],
      });
      expect(rejectedView.data.steps.proof).toEqual({
        output: { ref: "POD-1" },
        by: "a_d2_sender",
        at: expect.any(String),
        history: [],
      });
      const ended = await h.decided(reviewer, runId, "review", "approved");
      expect(ended.data.steps.review).toEqual({
        decision: "approved",
        by: "rev_d2@example.com",
        at: expect.any(String),
        history: [],
      });
      expect(ended.data.steps.done).toBeUndefined();
      expect(statesOf(ended)).toEqual({ prepare: "done", proof: "done", review: "done", done: "done" });
      for (const step of ["prepare", "proof", "review"])
        expect(Date.parse(ended.data.steps[step].at)).not.toBeNaN();

      // A wait_until records by: server; one whose value is missing fails the run with by: server and a note.
      const starter = await h.person("st_d2@example.com");
      const past = await starter.ok("start_run", {
        process: "deadline-wait",
        inputs: { notBefore: "2020-01-01T00:00:00Z" },
      });
      expect(past.data.steps.hold).toEqual({ by: "server", at: expect.any(String), history: [] });
      expect(statesOf(past)).toMatchObject({ hold: "done", act: "ready" });
      const missing = await starter.ok("start_run", { process: "deadline-wait", inputs: {} });
      expect(missing.run).toMatchObject({ state: "ended", outcome: "failed", ended: { by: "server" } });
      expect(missing.data.steps.hold).toMatchObject({
        decision: "failed",
        by: "server",
        note: expect.stringContaining("inputs.notBefore"),
      });
      expect(statesOf(missing)).toEqual({ hold: "failed", act: null, done: null });

      // History and rework: the rejecting approval keeps its record current and is not reached; the
      // returned-to step's completion stays current until it completes again, then moves to history.
      const editor = await h.person("ed_d2@example.com", ["editor"]);
      const ops = await h.operator("ops_d2@example.com");
      const drafting = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      await h.work(agent, drafting, "draft", { revision: "r1" });
      const reworked = await h.decided(editor, drafting, "editor_review", "rejected", { note: "Shorter." });
      expect(statesOf(reworked)).toEqual({ draft: "ready", editor_review: null, done: null });
      expect(reworked.data.steps.editor_review).toEqual({
        decision: "rejected",
        note: "Shorter.",
        by: "ed_d2@example.com",
        at: expect.any(String),
        history: [],
      });
      expect(reworked.data.steps.draft).toMatchObject({ output: { revision: "r1" }, history: [] });
      const again = await h.work(agent, drafting, "draft", { revision: "r2" });
      expect(again.data.steps.draft).toMatchObject({
        output: { revision: "r2" },
        history: [{ output: { revision: "r1" } }],
      });
      expect(again.data.steps.editor_review.decision).toBe("rejected");
      // Terminal clean-up: cancel with an open work item removes it and cancels the waiting step.
      const cancelled = await ops.ok("cancel", { runId: drafting, reason: "No longer needed." });
      expect(cancelled.run).toMatchObject({
        state: "cancelled",
        outcome: null,
        ended: { by: "ops_d2@example.com", note: "No longer needed." },
      });
      expect(statesOf(cancelled)).toEqual({ draft: "done", editor_review: "cancelled", done: null });
      expect(cancelled.workItems).toEqual([]);
    });

    it("3. handoff: issues after a refused submission and returned after an escalation, on get_work, on claim and on the escalation's work item; reset by rework through on_reject (§3.3)", async () => {
      const agent = await h.agent("a_d3");
      const next = await h.agent("b_d3");
      const editor = await h.person("ed_d3@example.com", ["editor"]);
      const ops = await h.operator("ops_d3@example.com");
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      expect((await h.agentItem(agent, runId, "draft")).handoff).toBeNull();
      const claim = await h.claim(agent, runId, "draft");
      expect(claim.handoff).toBeNull();
      refused(
        await agent.write("submit", { token: claim.token, output: { revision: 3 }, summary: "x" }),
        "not_accepted",
        ["output.revision: expected string"],
      );
      const escalated = await agent.ok("escalate", { token: claim.token, note: "The CMS times out." });
      expect(escalated.workItems[0].handoff).toEqual({ issues: ["output.revision: expected string"] });
      await h.decided(ops, runId, "draft", "returned", { note: "CMS restarted." });
      const expected = {
        issues: ["output.revision: expected string"],
        returned: { note: "CMS restarted.", by: "ops_d3@example.com", at: expect.any(String) },
      };
      expect((await h.agentItem(next, runId, "draft")).handoff).toEqual(expected);
      const taken = await h.claim(next, runId, "draft");
      expect(taken.handoff).toEqual(expected);
      await next.ok("submit", { token: taken.token, output: { revision: "r1" }, summary: "Drafted." });
      await h.decided(editor, runId, "editor_review", "rejected", { note: "Too long." });
      expect((await h.agentItem(agent, runId, "draft")).handoff).toBeNull();
      const fresh = await h.claim(agent, runId, "draft");
      expect(fresh.handoff).toBeNull();
      expect(fresh.data.steps.editor_review.note).toBe("Too long.");
    });

    it("4. people: role → bound group, initiator, person paths, an unresolved path fails the run, agents cannot start initiator processes, the snapshot, first decision wins, escalation decisions, due not restarted by returned (§3.4)", async () => {
      // A role maps to the group it is bound to at publication.
      const org = "people-org";
      await h.baton.publish(join(PROCESSES_DIR, "drafting"), { editor: "g_editorial" }, org);
      const member = await h.person("m_d4@example.com", ["g_editorial"], { org });
      const named = await h.person("n_d4@example.com", ["editor"], { org });
      const agentOrg = await h.agent("a_d4", org);
      const run = (await member.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      await h.work(agentOrg, run, "draft", { revision: "r" });
      const item = await h.workItem(member, run, "editor_review");
      expect(item.assignedTo).toEqual({ group: "g_editorial" });
      expect(await h.inboxEntry(named, run, "editor_review")).toBeUndefined();
      refused(await named.write("decide", { ...item.decide.arguments, decision: "approved" }), "forbidden");

      // Person paths, and an unresolved one failing the run with by: server and a note.
      const agent = await h.agent("a_d4");
      const starter = await h.person("st_d4@example.com");
      const resolved = (
        await starter.ok("start_run", { process: "person-paths", inputs: { reviewer: "rae@example.com" } })
      ).run.id;
      const picked = await h.work(agent, resolved, "pick", { approver: "abe@example.com" });
      expect(picked.workItems[0]).toMatchObject({
        stepId: "first_review",
        assignedTo: { person: "abe@example.com" },
      });
      const abe = await h.person("ABE@example.com");
      const approved = await h.decided(abe, resolved, "first_review", "approved");
      expect(approved.workItems[0]).toMatchObject({
        stepId: "second_review",
        assignedTo: { person: "rae@example.com" },
      });
      const unresolved = (await starter.ok("start_run", { process: "person-paths", inputs: {} })).run.id;
      const failed = await h.work(agent, unresolved, "pick", {});
      expect(failed.run).toMatchObject({
        state: "ended",
        outcome: "failed",
        ended: { by: "server", note: expect.stringContaining("steps.pick.output.approver") },
      });
      expect(failed.data.steps.first_review).toMatchObject({ decision: "failed", by: "server" });
      expect(statesOf(failed)).toMatchObject({ first_review: "failed", second_review: null });

      // Initiator: assigned to the starting person; refused for an agent.
      const emp = await h.person("emp_d4@example.com");
      const expense = await emp.ok("start_run", {
        process: "expense-reimbursement",
        inputs: { claimId: "X", manager: "m@example.com" },
      });
      expect(expense.workItems[0].assignedTo).toEqual({ person: "emp_d4@example.com" });
      const error = refused(
        await agent.write("start_run", {
          process: "expense-reimbursement",
          inputs: { claimId: "X", manager: "m@example.com" },
        }),
        "invalid",
      );
      expect(error.issues).toEqual(["steps.receipts.person: initiator needs a person to start the run"]);

      // The snapshot is a hash of the run data at read time (§3.4): the same across reads and across
      // writes that leave run data alone, different once run data changes. Held events, refused
      // decisions, returns, claims and escalations are not run data.
      const editor = await h.person("ed_d4@example.com", ["editor"]);
      const ops = await h.operator("ops_d4@example.com");
      const d = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, d, "draft");
      const escalated = await agent.ok("escalate", { token: claim.token, note: "Stuck." });
      const esc = escalated.workItems[0];
      const s0 = esc.snapshot;
      expect(s0).toMatch(/^[0-9a-f]{64}$/);
      const current = async () => (await ops.ok("get_run", { runId: d })).workItems[0].snapshot;
      expect(await current()).toBe(s0);
      expect((await h.workItem(ops, d, "draft")).snapshot).toBe(s0); // a get_work read
      expect(await agent.ok("send_event", { runId: d, name: "unrelated", data: { n: 1 } })).toEqual({
        consumedBy: null,
      });
      expect(await current()).toBe(s0);
      refused(
        await ops.write("decide", {
          ...esc.decide.arguments,
          decision: "completed",
          output: { revision: 7 },
        }),
        "not_accepted",
      );
      expect(await current()).toBe(s0);
      // Escalation: the three decisions and a due clock that `returned` does not restart.
      expect(esc.decide.decisions).toEqual(["returned", "completed", "failed"]);
      const dueBefore = escalated.steps.find((s: Data) => s.id === "draft").due;
      expect(esc.due).toBe(dueBefore);
      const returned = await h.decided(ops, d, "draft", "returned", { note: "Retry." });
      expect(returned.steps.find((s: Data) => s.id === "draft")).toMatchObject({
        state: "ready",
        due: dueBefore,
      });
      expect((await h.agentItem(agent, d, "draft")).due).toBe(dueBefore);
      const c2 = await h.claim(agent, d, "draft");
      const again = await agent.ok("escalate", { token: c2.token, note: "Still stuck." });
      // A new item after a return, a claim and an escalation, none of which changed run data: same snapshot.
      expect(again.workItems[0].id).not.toBe(esc.id);
      expect(again.workItems[0].snapshot).toBe(s0);
      const completed = await h.decided(ops, d, "draft", "completed", { output: { revision: "by-ops" } });
      expect(completed.data.steps.draft).toMatchObject({
        output: { revision: "by-ops" },
        by: "ops_d4@example.com",
      });
      // The completion changed run data: a new snapshot, and the old one is stale.
      const s1 = completed.workItems[0].snapshot;
      expect(s1).not.toBe(s0);
      const reviewItem = await h.workItem(editor, d, "editor_review");
      expect(reviewItem.snapshot).toBe(s1);
      refused(
        await editor.write("decide", { ...reviewItem.decide.arguments, snapshot: s0, decision: "approved" }),
        "stale",
      );

      // First decision wins among group members (the concurrent form is point 9): one shared item; the
      // first decision (a rejection into on_reject) does not end the run, and the second member, holding
      // the same item and a snapshot that is now stale, learns already_decided.
      const second = await h.person("ed2_d4@example.com", ["editor"]);
      expect((await h.workItem(second, d, "editor_review")).id).toBe(reviewItem.id);
      const rejected = await editor.ok("decide", {
        ...reviewItem.decide.arguments,
        decision: "rejected",
        note: "Tighten it.",
        requestId: rid(),
      });
      expect(rejected.run.state).toBe("active");
      expect(statesOf(rejected)).toMatchObject({ draft: "ready", editor_review: null });
      refused(
        await second.write("decide", { ...reviewItem.decide.arguments, decision: "approved" }),
        "conflict",
        ["already_decided"],
      );
      const after = await second.ok("get_run", { runId: d });
      expect(after.data.steps.editor_review).toMatchObject({ decision: "rejected", by: "ed_d4@example.com" });
      expect(statesOf(after)).toEqual(statesOf(rejected));
    });

    it("5. events: agents and operators send, people may not; held per run, oldest first by name, one delivery per wait; consumedBy (§3.6)", async () => {
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

    it("6. limits and mode: limits.runDataBytes bounds inputs at start, submissions and held events; mode test shows on get_work items, claims and work items (§3.3, §6 rule 3)", async () => {
      const agent = await h.agent("a_d6");
      const starter = await h.person("st_d6@example.com", ["reviewer"]);
      const cap = (await agent.ok("describe")).limits.runDataBytes as number;
      expect(cap).toBeGreaterThan(0);
      const big = (n: number) => "x".repeat(n);
      const tooBig = refused(
        await agent.write("start_run", {
          process: "triage",
          inputs: { ticket: "T", team: "red", notes: big(cap) },
        }),
        "invalid",
      );
      expect(tooBig.issues[0]).toMatch(
        new RegExp(`^inputs: run data would be \\d+ bytes, over limits\\.runDataBytes \\(${cap}\\)$`),
      );
      const runId = (await agent.ok("start_run", { process: "triage", inputs: { ticket: "T", team: "red" } }))
        .run.id;
      const claim = await h.claim(agent, runId, "classify");
      const over = refused(
        await agent.write("submit", { token: claim.token, output: { label: big(cap) }, summary: "x" }),
        "not_accepted",
      );
      expect(over.issues[0]).toMatch(/^run data: \d+ bytes with this submission, over limits\.runDataBytes/);
      expect((await agent.ok("get_run", { runId })).data.steps).toEqual({});
      await agent.ok("submit", { token: claim.token, output: { label: "bug" }, summary: "x" });
      const events = (await starter.ok("start_run", { process: "event-review", inputs: {} })).run.id;
      const half = Math.floor(cap / 2);
      expect(
        await agent.ok("send_event", { runId: events, name: "proof_received", data: { p: big(half) } }),
      ).toEqual({ consumedBy: null });
      const held = refused(
        await agent.write("send_event", { runId: events, name: "proof_received", data: { p: big(half) } }),
        "invalid",
      );
      expect(held.issues[0]).toMatch(
        /^data: the run data and held events with this event would be \d+ bytes/,
      );

      // mode: "test" on every get_work item, claim and work item of a test run.
      const test = (await starter.ok("start_run", { process: "event-review", inputs: {}, mode: "test" })).run
        .id;
      expect((await h.agentItem(agent, test, "prepare")).mode).toBe("test");
      const testClaim = await h.claim(agent, test, "prepare");
      expect(testClaim.mode).toBe("test");
      await agent.ok("submit", { token: testClaim.token, output: {}, summary: "x" });
      const view = await agent.ok("send_event", { runId: test, name: "proof_received" });
      expect(view).toEqual({ consumedBy: "proof" });
      const entry = await h.inboxEntry(starter, test, "review");
      expect(entry.mode).toBe("test");
      expect(entry.workItem.mode).toBe("test");
      expect((await starter.ok("get_run", { runId: test })).workItems[0].mode).toBe("test");
      const live = (await starter.ok("start_run", { process: "event-review", inputs: {} })).run.id;
      expect((await h.agentItem(agent, live, "prepare")).mode).toBe("live");
      expect((await h.claim(agent, live, "prepare")).mode).toBe("live");
    });

    it("7. idempotency: replays return the original result (a claim's token even after its lease ended); other arguments conflict; failed calls are not recorded; scope is the organization; concurrent first calls make one effect (§4)", async () => {
      const agent = await h.agent("a_d7");
      const ops = await h.operator("ops_d7@example.com");
      const editor = await h.person("ed_d7@example.com", ["editor"]);
      const startArgs = { process: "drafting", inputs: {}, requestId: rid() };
      const started = await editor.call("start_run", startArgs);
      expect(await editor.call("start_run", startArgs)).toEqual(started);
      refused(await editor.call("start_run", { ...startArgs, mode: "test" }), "conflict");
      const runId = started.ok ? started.data.run.id : "";

      // A claim replayed after its lease ended (here by the submission) returns the original token.
      const claimArgs = { runId, stepId: "draft", requestId: rid() };
      const claim = await agent.call("claim", claimArgs);
      expect(claim.ok).toBe(true);
      const token = claim.ok ? claim.data.token : "";
      await agent.ok("submit", { token, output: { revision: "r" }, summary: "x" });
      const replayed = await agent.call("claim", claimArgs);
      expect(withoutUrls(replayed)).toEqual(withoutUrls(claim));
      refused(await agent.call("claim", { ...claimArgs, stepId: "editor_review" }), "conflict");
      // The same requestId with another tool is other arguments.
      refused(
        await agent.call("send_event", { runId, name: "x", requestId: claimArgs.requestId }),
        "conflict",
      );

      // A failed call is not recorded: the retry with the same requestId can succeed.
      const item = await h.workItem(editor, runId, "editor_review");
      const decideArgs = { ...item.decide.arguments, decision: "rejected", requestId: rid() };
      refused(await editor.call("decide", { ...decideArgs, note: "" }), "invalid");
      const rejected = await editor.call("decide", { ...decideArgs, note: "Shorter." });
      expect(rejected.ok).toBe(true);
      expect(await editor.call("decide", { ...decideArgs, note: "Shorter." })).toEqual(rejected);
      const cancelArgs = { runId, reason: "Stop.", requestId: rid() };
      const cancelled = await ops.call("cancel", cancelArgs);
      expect(await ops.call("cancel", cancelArgs)).toEqual(cancelled);

      // Uploads replay too; the scope is the organization: another org may use the same requestId.
      const uploadArgs = {
        fileName: "a.txt",
        contentType: "text/plain",
        contentBase64: "YQ==",
        requestId: rid(),
      };
      const up = await agent.call("upload", uploadArgs);
      expect(await agent.call("upload", uploadArgs)).toEqual(up);
      refused(await agent.call("upload", { ...uploadArgs, fileName: "b.txt" }), "conflict");
      const org = "idem-org";
      await h.baton.publish(join(PROCESSES_DIR, "triage"), {}, org);
      const elsewhere = await h.agent("a_d7", org);
      const shared = rid();
      const here = await agent.call("start_run", {
        process: "triage",
        inputs: { ticket: "1", team: "red" },
        requestId: shared,
      });
      const there = await elsewhere.call("start_run", {
        process: "triage",
        inputs: { ticket: "1", team: "red" },
        requestId: shared,
      });
      expect(here.ok && there.ok).toBe(true);
      expect(here.ok && there.ok && here.data.run.id !== there.data.run.id).toBe(true);
      // Another identity reusing an organization's requestId is a different call: conflict.
      const other = await h.agent("b_d7");
      refused(
        await other.call("start_run", {
          process: "triage",
          inputs: { ticket: "1", team: "red" },
          requestId: shared,
        }),
        "conflict",
      );

      // Two concurrent first calls with one requestId: one effect, both get the same result.
      const concurrent = { process: "triage", inputs: { ticket: "C", team: "blue" }, requestId: rid() };
      const before = (await agent.ok("list_runs", { process: "triage", inputs: { ticket: "C" }, limit: 100 }))
        .items.length;
      const [x, y] = await Promise.all([
        agent.call("start_run", concurrent),
        agent.call("start_run", concurrent),
      ]);
      expect(x.ok).toBe(true);
      expect(y).toEqual(x);
      expect(
        (await agent.ok("list_runs", { process: "triage", inputs: { ticket: "C" }, limit: 100 })).items,
      ).toHaveLength(before + 1);
      const waits = (await editor.ok("start_run", { process: "two-waits", inputs: {} })).run.id;
      const event = { runId: waits, name: "ping", requestId: rid() };
      const [e1, e2] = await Promise.all([agent.call("send_event", event), agent.call("send_event", event)]);
      expect(e1).toEqual({ ok: true, data: { consumedBy: "first" } });
      expect(e2).toEqual(e1);
      expect(statesOf(await editor.ok("get_run", { runId: waits }))).toMatchObject({
        first: "done",
        second: "waiting",
      });
    });

    it("8. paging: get_work oldest first with cursor and limit 1–100 for agents and people; list_runs filters by process, state and inputs with paging; list_processes pages (tools.md)", async () => {
      const org = "paging-org";
      await h.baton.publish(join(PROCESSES_DIR, "triage"), {}, org);
      await h.baton.publish(join(PROCESSES_DIR, "drafting"), { editor: "editor" }, org);
      const agent = await h.agent("a_d8", org);
      const editor = await h.person("ed_d8@example.com", ["editor"], { org });
      const started: string[] = [];
      for (let i = 0; i < 5; i++) {
        const view = await agent.ok("start_run", {
          process: "triage",
          inputs: { ticket: `P-${i}`, team: i % 2 ? "red" : "blue" },
        });
        started.push(view.run.id);
      }
      const pages = await pageAll(agent, "get_work", { limit: 2, process: "triage" });
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      const items = pages.flat();
      expect(items.map((i: Data) => i.runId)).toEqual(started);
      const since = items.map((i: Data) => Date.parse(i.readySince));
      expect([...since].sort((p, q) => p - q)).toEqual(since);
      refused(await agent.call("get_work", { limit: 0 }), "invalid");
      refused(await agent.call("get_work", { limit: 101 }), "invalid");
      refused(await agent.call("get_work", { cursor: "not-a-cursor" }), "invalid");
      // A cursor of the right shape with values Baton never issues is refused too, not a retry
      // (review finding: it used to reach SQL as an invalid date and answer retry forever).
      const forged = Buffer.from(JSON.stringify(["x", "y", "z"])).toString("base64url");
      refused(await agent.call("get_work", { cursor: forged }), "invalid");
      refused(await editor.call("get_work", { cursor: forged }), "invalid");
      const forgedRuns = Buffer.from(JSON.stringify(["x", "y"])).toString("base64url");
      refused(await agent.call("list_runs", { cursor: forgedRuns }), "invalid");
      expect((await agent.ok("get_work", { limit: 100 })).items).toHaveLength(5);

      // People: their open work items, oldest first, paged.
      const reviews: string[] = [];
      for (let i = 0; i < 3; i++) {
        const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
        await h.work(agent, runId, "draft", { revision: `r${i}` });
        reviews.push(runId);
      }
      const inbox = (await pageAll(editor, "get_work", { limit: 1 })).flat();
      expect(inbox.map((e: Data) => e.runId)).toEqual(reviews);
      expect(inbox.every((e: Data) => e.workItem.stepId === "editor_review")).toBe(true);

      // list_runs: filters by process, state and equality on input fields, paged.
      await h.work(agent, started[0] as string, "classify", { label: "bug" });
      const red = (
        await pageAll(agent, "list_runs", { process: "triage", inputs: { team: "red" }, limit: 1 })
      ).flat();
      expect(red.map((r: Data) => r.inputs.team)).toEqual(["red", "red"]);
      const ended = await agent.ok("list_runs", { state: "ended" });
      expect(ended.items.map((r: Data) => r.id)).toEqual([started[0]]);
      expect(ended.items[0]).toEqual({
        id: started[0],
        process: "triage",
        version: 1,
        state: "ended",
        outcome: "triaged",
        startedAt: expect.any(String),
        updatedAt: expect.any(String),
        inputs: { ticket: "P-0", team: "blue" },
      });
      expect((await agent.ok("list_runs", { process: "drafting" })).items).toHaveLength(3);
      expect(
        (await agent.ok("list_runs", { inputs: { ticket: "P-3", team: "red" } })).items.map(
          (r: Data) => r.id,
        ),
      ).toEqual([started[3]]);
      expect((await agent.ok("list_runs", { inputs: { ticket: "nope" } })).items).toEqual([]);
      const all = (await pageAll(agent, "list_runs", { limit: 3 })).flat();
      expect(new Set(all.map((r: Data) => r.id)).size).toBe(8);

      // list_processes: paged like get_work (20 a page).
      const catalog = "catalog-org";
      const dir = mkdtempSync(join(tmpdir(), "baton-catalog-"));
      try {
        for (let i = 1; i <= 23; i++) {
          const name = `catalog-${String(i).padStart(2, "0")}`;
          mkdirSync(join(dir, name));
          writeFileSync(
            join(dir, name, "PROCESS.md"),
            `---\nname: ${name}\ndescription: Catalog entry ${i}.\nsteps:\n  - id: only\n    agent: Do it.\n  - id: done\n    finish: done\n---\n`,
          );
          await h.baton.publish(join(dir, name), {}, catalog);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const reader = await h.agent("a_d8", catalog);
      const processes = await pageAll(reader, "list_processes", {});
      expect(processes.map((p) => p.length)).toEqual([20, 3]);
      expect(processes.flat().map((p: Data) => p.name)).toEqual(
        Array.from({ length: 23 }, (_, i) => `catalog-${String(i + 1).padStart(2, "0")}`),
      );
      refused(await reader.call("list_processes", { cursor: "bogus" }), "invalid");
    });

    it("9. concurrency: 50 agents claiming one step at once get exactly one token; 20 group members deciding one item at once apply one decision, the rest already_decided or run_ended, never stale (§6, tools.md decide)", async () => {
      const starter = await h.person("st_d9@example.com");
      const runId = (
        await starter.ok("start_run", { process: "triage", inputs: { ticket: "RACE", team: "red" } })
      ).run.id;
      const agents = await Promise.all(Array.from({ length: 50 }, (_, i) => h.agent(`racer_${i}`)));
      const claims = await Promise.all(agents.map((a) => a.write("claim", { runId, stepId: "classify" })));
      const won = claims.filter((c) => c.ok);
      expect(won).toHaveLength(1);
      for (const c of claims.filter((r) => !r.ok)) refused(c, "conflict", ["claimed_by_other"]);

      const editors = await Promise.all(
        Array.from({ length: 20 }, (_, i) => h.person(`member_${i}@example.com`, ["editor"])),
      );
      const race = async (decision: "rejected" | "approved"): Promise<Result[]> => {
        const first = editors[0] as McpSession;
        const editorRun = (await first.ok("start_run", { process: "drafting", inputs: {} })).run.id;
        await h.work(agents[0] as McpSession, editorRun, "draft", { revision: "r" });
        const item = await h.workItem(first, editorRun, "editor_review");
        return Promise.all(
          editors.map((e) =>
            e.write("decide", {
              ...item.decide.arguments,
              decision,
              ...(decision === "rejected" ? { note: "No." } : {}),
            }),
          ),
        );
      };
      const rejections = await race("rejected");
      expect(rejections.filter((r) => r.ok)).toHaveLength(1);
      for (const r of rejections.filter((x) => !x.ok)) refused(r, "conflict", ["already_decided"]);
      const approvals = await race("approved");
      expect(approvals.filter((r) => r.ok)).toHaveLength(1);
      for (const r of approvals.filter((x) => !x.ok)) refused(r, "conflict", ["run_ended"]);
    });
  });
}

/** Every page of a paged tool, following `nextCursor` until it is null. */
async function pageAll(
  session: McpSession,
  tool: "get_work" | "list_runs" | "list_processes",
  args: Record<string, unknown>,
) {
  const pages: Data[][] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 50; i++) {
    const page = await session.ok(tool, cursor ? { ...args, cursor } : args);
    pages.push(page.items);
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
  throw new Error(`${tool} did not end within 50 pages`);
}
