import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withoutUrls } from "../support/mcp.ts";
import {
  type Data,
  FIXTURES_DIR,
  type Harness,
  refused,
  rid,
  sameNameBindings,
  statesOf,
} from "./support.ts";

/**
 * Checklist round 3 (revision 3 + parallel). Baton offers no profile yet, so the `major-incident`
 * traces (R3-1a, R3-1b, R3-1d) are refused at publication here and replayed with the parallel profile's
 * issue; their core parts (a stale snapshot recovering with the same requestId, an agent claiming a
 * person step, a failed decision ending the run) are replayed on core fixtures. The `vendor-check`
 * fixture needs the check profile and is refused likewise.
 */
export function round3Scenarios(h: Harness): void {
  describe("checklist round 3", () => {
    it("R3-1 major-incident (parallel) and vendor-check (check) are refused at publication: this server offers neither profile (§8)", async () => {
      for (const [name, profile] of [
        ["major-incident", "parallel-1"],
        ["vendor-check", "check-1"],
      ] as const) {
        const folder = join(FIXTURES_DIR, name);
        await expect(h.baton.publish(folder, sameNameBindings(folder))).rejects.toThrow(
          new RegExp(`needs the ${profile} profile`),
        );
      }
      // Every page of the catalog, so a catalog longer than one page cannot hide them.
      const reader = await h.agent("a_r3");
      const names: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Data = await reader.ok("list_processes", cursor ? { cursor } : {});
        names.push(...page.items.map((p: Data) => p.name));
        cursor = page.nextCursor;
      } while (cursor);
      expect(names).toContain("major-incident-response");
      expect(names).not.toContain("major-incident");
      expect(names).not.toContain("vendor-check");
    });

    it("R3-1b / R3-3b a stale decision recovers: the refused call is not recorded, so the same requestId succeeds with a fresh snapshot (§3.4, §4)", async () => {
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

    it("R3-1c in core: an agent claiming a person step is forbidden; a failed decision ends the run, the late submit (dead token) and decide get run_ended, every participant reads the terminal view (§3.5, tools.md claim)", async () => {
      // Core has one open step at a time, so the review's live claim on a sibling branch cannot exist
      // here; the closest core shape is an agent's token made dead by its escalation, whose operator
      // item is then decided `failed`. The token answers `stale` before the end and `run_ended` after:
      // run_ended is checked first.
      const agent = await h.agent("a_r3c");
      const hr = await h.person("hr3c@example.com", ["hr-operations"]);
      const manager = await h.person("hm3@example.com");
      const it_ = await h.person("it3c@example.com", ["it-operations"]);
      const ops = await h.operator("ops3c@example.com");
      const runId = (
        await hr.ok("start_run", {
          process: "employee-onboarding",
          inputs: {
            employeeId: "E-3",
            employeeName: "Jo",
            startDate: "2026-12-01",
            hiringManager: "hm3@example.com",
          },
        })
      ).run.id;
      refused(await agent.write("claim", { runId, stepId: "hr_setup" }), "forbidden");
      const hrItem = await h.workItem(hr, runId, "hr_setup");
      await h.decided(hr, runId, "hr_setup", "completed", {
        output: { hrisRecord: "HR-3", location: "Lyon", jobTitle: "Designer" },
        evidence: [{ kind: "link", ref: "https://hris/3" }],
      });
      await h.decided(manager, runId, "access_plan", "completed", {
        output: { accessRequests: ["wiki"], equipment: "Laptop", buddy: "bo@example.com" },
      });
      await h.decided(it_, runId, "it_setup", "completed", {
        output: { assetTag: "LT-3", accounts: ["wiki"], handoverPlan: "Desk 1." },
        evidence: [{ kind: "link", ref: "https://it/3" }],
      });
      const claim = await h.claim(agent, runId, "welcome");
      const lateSubmit = {
        token: claim.token,
        output: { checklist: "CL-3" },
        evidence: [{ kind: "link", ref: "https://wiki/cl-3" }],
        summary: "Sent the welcome checklist.",
      };
      const escalated = await agent.ok("escalate", { token: claim.token, note: "The wiki is read-only." });
      refused(await agent.write("submit", lateSubmit), "stale");
      const c0 = await h.workItem(ops, runId, "welcome");
      expect(c0.snapshot).toBe(escalated.workItems[0].snapshot);
      const failed = await h.decided(ops, runId, "welcome", "failed", { note: "Start date moved a year." });
      expect(failed.run).toMatchObject({
        state: "ended",
        outcome: "failed",
        ended: { by: "ops3c@example.com", note: "Start date moved a year." },
      });
      expect(statesOf(failed)).toEqual({
        hr_setup: "done",
        access_plan: "done",
        it_setup: "done",
        welcome: "failed",
        confirm_ready: null,
        done: null,
      });
      expect(failed.data.steps.welcome).toEqual({
        decision: "failed",
        note: "Start date moved a year.",
        by: "ops3c@example.com",
        at: expect.any(String),
        history: [],
      });
      expect(failed.workItems).toEqual([]);
      // The late submit with the dead token, the late decision on the same item with its snapshot, and
      // a late decision on an earlier, decided item: run_ended before stale and already_decided.
      refused(await agent.write("submit", lateSubmit), "conflict", ["run_ended"]);
      refused(
        await ops.write("decide", { ...c0.decide.arguments, decision: "returned", note: "Try again." }),
        "conflict",
        ["run_ended"],
      );
      refused(
        await hr.write("decide", { ...hrItem.decide.arguments, decision: "failed", note: "x" }),
        "conflict",
        ["run_ended"],
      );
      for (const who of [agent, hr, manager, it_]) {
        const view = await who.ok("get_run", { runId });
        expect(view.run).toEqual(failed.run);
        expect(statesOf(view)).toEqual(statesOf(failed));
        expect(view.workItems).toEqual([]);
      }
      expect(await h.inboxEntry(ops, runId, "welcome")).toBeUndefined();
    });

    it("R3-2a expense via get_run/decide only: evidence: [file] refuses none or a guessed id; after a real upload the manager sees sha256 and url (§3.4, §5, §6 rule 3)", async () => {
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

    it("R3-2b contract review: approvals and a signature end the run signed; output/evidence/summary with approved and note with completed are invalid (tools.md decide)", async () => {
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

    it("R3-3a (without lease expiry) a lost submit response replayed with its requestId returns the original run view, no expiresAt, nothing completed twice (§3.3, §4)", async () => {
      const agent = await h.agent("a_r3a3");
      const editor = await h.person("ed3a@example.com", ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "draft");
      const args = { token: claim.token, output: { revision: "r1" }, summary: "Drafted.", requestId: rid() };
      const first = await agent.call("submit", args);
      expect(first.ok).toBe(true);
      await h.decided(editor, runId, "editor_review", "rejected", { note: "Shorter." });
      const replay = await agent.call("submit", args);
      expect(withoutUrls(replay)).toEqual(withoutUrls(first));
      expect(replay.ok && "expiresAt" in replay.data).toBe(false);
      const now = await agent.ok("get_run", { runId });
      expect(statesOf(now)).toMatchObject({ draft: "ready", editor_review: null });
      expect(now.data.steps.draft.history).toEqual([]);
    });

    it("R3-3c events: two before readiness held, the first consumed, a third after consumption held; a replay returns the original; a person is forbidden; an ended run is run_ended (§3.6)", async () => {
      const agent = await h.agent("a_r3c3");
      const sender = await h.agent("a_sender");
      const reviewer = await h.person("rev3@example.com", ["reviewer"]);
      const person = await h.person("nobody3@example.com");
      const runId = (await reviewer.ok("start_run", { process: "event-review", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "prepare");
      const first = { runId, name: "proof_received", data: { delivery: 1 }, requestId: rid() };
      expect(await sender.ok("send_event", first)).toEqual({ consumedBy: null });
      expect(await sender.ok("send_event", { runId, name: "proof_received", data: { delivery: 2 } })).toEqual(
        { consumedBy: null },
      );
      const submitted = await agent.ok("submit", {
        token: claim.token,
        output: {},
        summary: "Asked for the proof.",
      });
      expect(submitted.data.steps.proof).toMatchObject({ output: { delivery: 1 }, by: "a_sender" });
      expect(statesOf(submitted)).toMatchObject({ proof: "done", review: "waiting" });
      expect(submitted.workItems.map((w: Data) => w.stepId)).toEqual(["review"]);
      expect(await sender.ok("send_event", { runId, name: "proof_received", data: { delivery: 3 } })).toEqual(
        { consumedBy: null },
      );
      // Held, not consumed: the wait keeps delivery 1 and the review is still open.
      const after = await reviewer.ok("get_run", { runId });
      expect(after.data.steps.proof.output).toEqual({ delivery: 1 });
      expect(statesOf(after)).toMatchObject({ proof: "done", review: "waiting" });
      refused(await person.write("send_event", { runId, name: "proof_received" }), "forbidden");
      const ended = await h.decided(reviewer, runId, "review", "approved");
      expect(ended.run.outcome).toBe("reviewed");
      refused(await sender.write("send_event", { runId, name: "proof_received" }), "conflict", ["run_ended"]);
      // A replay is told apart from a new delivery only where their answers differ: on the ended run a new
      // send_event is run_ended, while the replay of the first still returns its original result (§3.5, §4).
      expect(await sender.call("send_event", first)).toEqual({ ok: true, data: { consumedBy: null } });
    });

    it("R3-3d an operator cancels with a live claim and with an open item: cancelled, items gone, late writes run_ended, get_work no longer lists it (§3.5)", async () => {
      const agent = await h.agent("a_r3d");
      const editor = await h.person("ed3d@example.com", ["editor"]);
      const ops = await h.operator("ops3d@example.com");
      const claimed = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, claimed, "draft");
      const c1 = await ops.ok("cancel", { runId: claimed, reason: "Client cancelled.", requestId: rid() });
      expect(c1.run).toMatchObject({
        state: "cancelled",
        outcome: null,
        ended: { by: "ops3d@example.com", note: "Client cancelled." },
      });
      expect(statesOf(c1)).toEqual({ draft: "cancelled", editor_review: null, done: null });
      refused(
        await agent.write("submit", { token: claim.token, output: { revision: "r" }, summary: "x" }),
        "conflict",
        ["run_ended"],
      );

      const waiting = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      await h.work(agent, waiting, "draft", { revision: "r" });
      const item = await h.workItem(editor, waiting, "editor_review");
      const c2 = await ops.ok("cancel", { runId: waiting, reason: "Duplicate." });
      expect(c2.workItems).toEqual([]);
      expect(statesOf(c2)).toMatchObject({ draft: "done", editor_review: "cancelled" });
      refused(await editor.write("decide", { ...item.decide.arguments, decision: "approved" }), "conflict", [
        "run_ended",
      ]);
      expect(await h.inboxEntry(editor, waiting, "editor_review")).toBeUndefined();
      refused(await ops.write("cancel", { runId: waiting, reason: "Again." }), "conflict", ["run_ended"]);
    });

    it("R3-3e an agent starting a process with a later initiator task is invalid and creates no run (§3.4, tools.md start_run)", async () => {
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
  });
}
