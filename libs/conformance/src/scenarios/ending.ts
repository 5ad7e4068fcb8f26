import { describe, expect, it } from "vitest";
import { type Harness, refused, rid, statesOf } from "../support.ts";

/**
 * The end of a run (§3.5): a `failed` decision, `cancel`, and every late write answered `run_ended`.
 */
export function endingScenarios(h: Harness): void {
  describe("§3.5 states: failed, cancelled and the end of a run", () => {
    it("[R2-extra-b R2-B15 #38 cancel.conflict:run_ended] after failed and after cancel, items are removed and late writes are run_ended; cancel cancels the unfinished step and kills its live token; in core a failed decision leaves no other unfinished step or live token, so there the failed step is failed, nothing else reached, held events dropped (§3.5)", async () => {
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

    it("[R3-1c R3-Q4 claim.forbidden] in core: an agent claiming a person step is forbidden; a failed decision ends the run, the late submit (dead token) and decide get run_ended, every participant reads the terminal view (§3.5, tools.md claim)", async () => {
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

    it("[R3-3d #38 #39 R3-Q12 R3-Q16 cancel.conflict:run_ended] an operator cancels with a live claim and with an open item: cancelled, items gone, late writes run_ended, get_work no longer lists it (§3.5)", async () => {
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
  });
}
