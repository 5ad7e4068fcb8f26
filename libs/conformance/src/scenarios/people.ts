import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { McpSession } from "../mcp.ts";
import { type Data, type Harness, PROCESSES_DIR, refused, rid, statesOf } from "../support.ts";

/**
 * People (§3.4, §6 rule 4): work items and their inbox (`get_work`), assignment, snapshots, and
 * `decide` with its decision table and its errors in the order tools.md checks them.
 */
export function peopleScenarios(h: Harness): void {
  describe("§3.4 people: work items, snapshots and decide", () => {
    /** A drafting run with its draft submitted: the editor's review is open. */
    async function inReview(agentId: string, editorId: string) {
      const agent = await h.agent(agentId);
      const editor = await h.person(editorId, ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id as string;
      await h.work(agent, runId, "draft", { revision: "r1" });
      return { agent, editor, runId };
    }

    it("[R1-4 R3-Q9 R3-Q11] contract-review without agent steps: uploads, legal and finance approve, signature with a second file → ended signed; agents get no work at any point, each person finds their item in get_work (§4.2, §5)", async () => {
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

    it("[R2-2 #35 #64 R2-B2 R3-Q4 R3-Q10] employee-onboarding: person path assignee, work item requirements equal claim.step's, a wrong key is not_accepted, failed ends the run (§3.4)", async () => {
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

    it("[#57 #60 #61 #62 #65 #67 #73 decide.forbidden decide.stale] people: role → bound group, initiator, person paths, an unresolved path fails the run, agents cannot start initiator processes, the snapshot, first decision wins, escalation decisions, due not restarted by returned (§3.4; issue #4 deliver 4)", async () => {
      // A role maps to the group it is bound to at publication.
      const org = h.org("people-org");
      await h.publish(join(PROCESSES_DIR, "drafting"), { editor: "g_editorial" }, org);
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

    it("[R3-1b R3-3b R2-B12 #51 decide.stale] a stale decision recovers: the refused call is not recorded, so the same requestId succeeds with a fresh snapshot (§3.4, §4)", async () => {
      // In core one step is open at a time, so run data changes between a person's read and their
      // decision when they hold a snapshot from an earlier read: here, from the first review's item.
      const agent = await h.agent("a_r3b");
      const editor = await h.person("ed3b@example.com", ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      await h.work(agent, runId, "draft", { revision: "r1" });
      const first = await h.workItem(editor, runId, "editor_review");
      await h.decided(editor, runId, "editor_review", "rejected", { note: "Tighten it." });
      await h.work(agent, runId, "draft", { revision: "r2" });
      const second = await h.workItem(editor, runId, "editor_review");
      expect(second.snapshot).not.toBe(first.snapshot);
      const args = {
        runId,
        workItemId: second.id,
        snapshot: first.snapshot,
        decision: "approved",
        requestId: `ib-sec-${rid()}`,
      };
      refused(await editor.call("decide", args), "stale");
      expect((await h.workItem(editor, runId, "editor_review")).id).toBe(second.id); // nothing recorded
      const fresh = await editor.ok("get_run", { runId });
      expect(fresh.workItems[0].snapshot).toBe(second.snapshot);
      const ok = await editor.call("decide", { ...args, snapshot: fresh.workItems[0].snapshot });
      expect(ok.ok && ok.data.run.outcome).toBe("published");
    });

    it("[R3-2b decide.invalid:combination] contract review: approvals and a signature end the run signed; output/evidence/summary with approved and note with completed are invalid (tools.md decide)", async () => {
      const starter = await h.person("st3@example.com");
      const owner = await h.person("own3@example.com");
      const legal = await h.person("lee3@example.com", ["legal-reviewer"]);
      const finance = await h.person("fay3@example.com", ["finance-reviewer"]);
      const signer = await h.person("sig3@example.com", ["authorized-signatory"]);
      const runId = (
        await starter.ok("start_run", {
          process: "contract-review",
          inputs: { contractId: "C-77", document: "D", owner: "own3@example.com" },
        })
      ).run.id;
      const file = await h.upload(owner, "revision", "rev.txt");
      const wrongNote = await h.decide(owner, runId, "prepare", "completed", {
        output: { revision: "r", summary: "s" },
        evidence: [{ kind: "file", ref: file.id }],
        note: "Done.",
      });
      expect(refused(wrongNote, "invalid").issues).toEqual([
        'note: not with decision "completed"; put what you did in summary',
      ]);
      await h.decided(owner, runId, "prepare", "completed", {
        output: { revision: "r", summary: "s" },
        evidence: [{ kind: "file", ref: file.id }],
      });
      const wrong = await h.decide(legal, runId, "legal_review", "approved", {
        output: { ok: true },
        evidence: [{ kind: "link", ref: "x" }],
        summary: "Fine.",
      });
      expect(refused(wrong, "invalid").issues).toEqual([
        'output: only with decision "completed", not "approved"',
        'evidence: only with decision "completed", not "approved"',
        'summary: only with decision "completed", not "approved"',
      ]);
      await h.decided(legal, runId, "legal_review", "approved");
      await h.decided(finance, runId, "finance_review", "approved");
      const signed = await h.upload(signer, "signed", "signed.txt");
      const ended = await h.decided(signer, runId, "sign", "completed", {
        output: { signedRevision: "SIGNED-77", signedAt: "2026-10-06T10:00:00Z" },
        evidence: [{ kind: "file", ref: signed.id }],
      });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "signed" });
    });

    it("[decide.order decide.conflict:run_ended decide.conflict:already_decided decide.not_found decide.stale decide.forbidden decide.invalid:combination decide.not_accepted #63 R2-B14 R3-Q5 W2] decide checks run_ended → already_decided → not_found → stale → forbidden → invalid (decision and argument combinations) → not_accepted, each pinned where the next would also apply (tools.md decide; issue #4 deliver 1)", async () => {
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

    it("[#26 decide.invalid:combination decide.not_accepted] decide argument combinations: next/reason only with completed; note never with completed; output/evidence/summary only with completed; next on a scalar-next task is not_accepted (tools.md decide, §3.2; issue #4 deliver 1)", async () => {
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

    it("[R2-extra-a R2-B13 #62 start_run.invalid:initiator] an agent starting a process whose later step is assigned to initiator is invalid (tools.md start_run)", async () => {
      const agent = await h.agent("a_extra");
      const error = refused(
        await agent.write("start_run", { process: "later-initiator", inputs: {} }),
        "invalid",
      );
      expect(error.issues).toEqual(["steps.sign_off.person: initiator needs a person to start the run"]);
    });

    it("[R3-3e #62 start_run.invalid:initiator] an agent starting a process with a later initiator task is invalid and creates no run (§3.4, tools.md start_run)", async () => {
      const agent = await h.agent("a_r3e");
      const requestId = rid();
      const count = async () =>
        (await agent.ok("list_runs", { process: "later-initiator", limit: 100 })).items.length;
      const before = await count();
      refused(
        await agent.call("start_run", { process: "later-initiator", inputs: {}, requestId }),
        "invalid",
      );
      expect(await count()).toBe(before);
      // A person may start it, and the failed call was not recorded: the same requestId now succeeds.
      const person = await h.person("starter3e@example.com");
      const started = await person.call("start_run", { process: "later-initiator", inputs: {}, requestId });
      expect(started.ok).toBe(true);
      expect(await count()).toBe(before + 1);
    });

    it("[#58 W5] group membership is the caller's at each call: a person who joined the group after the item opened decides it, one who left no longer sees or decides it (§3.4; the spec leaves membership changes open)", async () => {
      const agent = await h.agent("a_58");
      const leaverIn = await h.person("leaver58@example.com", ["editor"]);
      const leaverOut = await h.person("leaver58@example.com");
      const joinerOut = await h.person("joiner58@example.com");
      const joinerIn = await h.person("joiner58@example.com", ["editor"]);
      const runId = (await leaverIn.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      await h.work(agent, runId, "draft", { revision: "r" });
      const item = await h.workItem(leaverIn, runId, "editor_review");
      expect(await h.inboxEntry(leaverOut, runId, "editor_review")).toBeUndefined();
      refused(
        await leaverOut.write("decide", { ...item.decide.arguments, decision: "approved" }),
        "forbidden",
      );
      expect(await h.inboxEntry(joinerOut, runId, "editor_review")).toBeUndefined();
      refused(
        await joinerOut.write("decide", { ...item.decide.arguments, decision: "approved" }),
        "forbidden",
      );
      expect((await h.workItem(joinerIn, runId, "editor_review")).id).toBe(item.id);
      const approved = await joinerIn.ok("decide", { ...item.decide.arguments, decision: "approved" });
      expect(approved.run).toMatchObject({ state: "ended", outcome: "published" });
      expect(approved.data.steps.editor_review.by).toBe("joiner58@example.com");
    });

    it("[W1] the decisions a work item offers: approved, rejected and failed on an approval; completed and failed on a task; returned, completed and failed on an escalated agent step (tools.md run view)", async () => {
      const agent = await h.agent("a_w1");
      const editor = await h.person("edw1@example.com", ["editor"]);
      const ops = await h.operator("opsw1@example.com");
      const hr = await h.person("hrw1@example.com", ["hr-operations"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "draft");
      const escalated = await agent.ok("escalate", { token: claim.token, note: "Stuck." });
      expect(escalated.workItems[0].decide.decisions).toEqual(["returned", "completed", "failed"]);
      expect((await h.workItem(ops, runId, "draft")).decide.decisions).toEqual([
        "returned",
        "completed",
        "failed",
      ]);
      const completed = await h.decided(ops, runId, "draft", "completed", { output: { revision: "by-ops" } });
      expect(completed.workItems[0].decide.decisions).toEqual(["approved", "rejected", "failed"]);
      expect((await h.workItem(editor, runId, "editor_review")).decide.decisions).toEqual([
        "approved",
        "rejected",
        "failed",
      ]);
      const onboarding = await hr.ok("start_run", {
        process: "employee-onboarding",
        inputs: {
          employeeId: "E-w1",
          employeeName: "N",
          startDate: "2026-12-01",
          hiringManager: "hm@example.com",
        },
      });
      expect(onboarding.workItems[0].decide.decisions).toEqual(["completed", "failed"]);
      expect((await h.workItem(hr, onboarding.run.id, "hr_setup")).decide.decisions).toEqual([
        "completed",
        "failed",
      ]);
    });
  });
}
