import { describe, expect, it } from "vitest";
import { type Data, type Harness, statesOf } from "../support.ts";

/**
 * Run data (§3.1): what each completion records, `history` and rework through `on_reject`.
 */
export function runDataScenarios(h: Harness): void {
  describe("§3.1 run data: records, history and rework", () => {
    it("[R1-2 #32] employee-onboarding: three person tasks, an agent, an approval; a rejection moves it_setup and welcome to history (§3.1, §3.4)", async () => {
      const hr = await h.person("hr@example.com", ["hr-operations"]);
      const manager = await h.person("hm@example.com");
      const it_ = await h.person("it@example.com", ["it-operations"]);
      const agent = await h.agent("a_welcome");
      const started = await hr.ok("start_run", {
        process: "employee-onboarding",
        inputs: {
          employeeId: "E-7",
          employeeName: "Kim",
          startDate: "2026-11-02",
          hiringManager: "hm@example.com",
        },
      });
      const runId = started.run.id;
      expect(started.workItems[0]).toMatchObject({
        stepId: "hr_setup",
        assignedTo: { group: "hr-operations" },
      });
      await h.decided(hr, runId, "hr_setup", "completed", {
        output: { hrisRecord: "HR-7", location: "Berlin", jobTitle: "Engineer" },
        evidence: [{ kind: "link", ref: "https://hris.example.com/7" }],
      });
      const plan = await h.workItem(manager, runId, "access_plan");
      expect(plan.assignedTo).toEqual({ person: "hm@example.com" });
      await h.decided(manager, runId, "access_plan", "completed", {
        output: { accessRequests: ["crm", "wiki"], equipment: "Laptop", buddy: "bo@example.com" },
      });
      await h.decided(it_, runId, "it_setup", "completed", {
        output: { assetTag: "LT-7", accounts: ["crm"], handoverPlan: "Desk 4, day one." },
        evidence: [{ kind: "link", ref: "https://it.example.com/t/7" }],
      });
      await h.work(
        agent,
        runId,
        "welcome",
        { checklist: "CL-7" },
        { evidence: [{ kind: "link", ref: "https://wiki/cl-7" }] },
      );
      const rejected = await h.decided(manager, runId, "confirm_ready", "rejected", {
        note: "No buddy meeting booked.",
      });
      expect(statesOf(rejected)).toEqual({
        hr_setup: "done",
        access_plan: "waiting",
        it_setup: null,
        welcome: null,
        confirm_ready: null,
        done: null,
      });
      const steps = rejected.data.steps;
      expect(steps.it_setup).toEqual({
        history: [expect.objectContaining({ output: expect.objectContaining({ assetTag: "LT-7" }) })],
      });
      expect(steps.welcome).toEqual({
        history: [expect.objectContaining({ output: { checklist: "CL-7" } })],
      });
      expect(steps.hr_setup.history).toEqual([]);
      expect(steps.confirm_ready).toMatchObject({ decision: "rejected", note: "No buddy meeting booked." });

      // Second pass to the end.
      await h.decided(manager, runId, "access_plan", "completed", {
        output: { accessRequests: ["crm"], equipment: "Laptop", buddy: "bo@example.com" },
      });
      await h.decided(it_, runId, "it_setup", "completed", {
        output: { assetTag: "LT-8", accounts: ["crm"], handoverPlan: "Desk 4." },
        evidence: [{ kind: "link", ref: "https://it.example.com/t/8" }],
      });
      await h.work(
        agent,
        runId,
        "welcome",
        { checklist: "CL-8" },
        { evidence: [{ kind: "link", ref: "https://wiki/cl-8" }] },
      );
      const ended = await h.decided(manager, runId, "confirm_ready", "approved");
      expect(ended.run).toMatchObject({ state: "ended", outcome: "ready" });
      expect(ended.data.steps.confirm_ready.history).toEqual([
        expect.objectContaining({ decision: "rejected" }),
      ]);
    });

    it("[R1-7 #29 R3-Q1] blog-publication: rejection with a note, the next claim reads it, approve, a past wait_until continues at once → ended published (§3.1, §2.2)", async () => {
      const agent = await h.agent("a_writer");
      const editor = await h.person("ed@example.com", ["editor"]);
      const runId = (
        await editor.ok("start_run", {
          process: "blog-publication",
          inputs: { brief: "Launch post", slug: "launch", publishAt: "2026-01-01T09:00:00+01:00" },
        })
      ).run.id;
      const draft = (revision: string) => ({ revision, title: "Launch", summary: "We launched." });
      const link = { evidence: [{ kind: "link", ref: "https://cms/preview/1" }] };
      await h.work(agent, runId, "draft", draft("rev-1"), link);
      await h.decided(editor, runId, "editor_review", "rejected", { note: "Cite the benchmark source." });
      const again = await h.claim(agent, runId, "draft");
      expect(again.data.steps.editor_review.note).toBe("Cite the benchmark source.");
      expect(again.handoff).toBeNull();
      await agent.ok("submit", {
        token: again.token,
        output: draft("rev-2"),
        summary: "Added the source.",
        ...link,
      });
      const approved = await h.decided(editor, runId, "editor_review", "approved");
      // A wait_until whose time has passed continues at once, within the same write (§2.2, §4).
      expect(statesOf(approved)).toMatchObject({ publication_time: "done", publish: "ready" });
      expect(approved.data.steps.publication_time).toMatchObject({ by: "server" });
      const ended = await h.work(
        agent,
        runId,
        "publish",
        { url: "https://blog/launch", publishedRevision: "rev-2" },
        link,
      );
      expect(ended.run).toMatchObject({ state: "ended", outcome: "published" });
    });

    it("[#28 #29 #33 #39 #76 #78 R3-Q6 R3-Q17 W4] run data and states: by/at on every completion (agent, person, event sender, server), a server-failed step, history and rework through on_reject, terminal clean-up (§3.1, §3.5; issue #4 deliver 2)", async () => {
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

    it("[R2-8 #33] incident-postmortem: track_closure carries due and overdue false; a rejected review returns to draft, keeps its rejection current, and the re-reviewed item has a restarted due (§2.2 due, §3.1)", async () => {
      const agent = await h.agent("a_pm8");
      const owner = await h.person("io8@example.com");
      const runId = (
        await owner.ok("start_run", {
          process: "incident-postmortem",
          inputs: { incidentId: "INC-28", incidentOwner: "io8@example.com" },
        })
      ).run.id;
      const link = { evidence: [{ kind: "link", ref: "https://inc/28" }] };
      const DAY = 24 * 60 * 60 * 1000;
      // `due` is measured from the moment the step became ready: the `updatedAt` of the write that readied it.
      const dueAfter = (item: Data, readied: Data) =>
        Date.parse(item.due) - Date.parse(readied.run.updatedAt);
      const drafted = await h.work(
        agent,
        runId,
        "draft",
        { report: "v1", proposedActions: [{ ref: "ACT-1" }, { ref: "ACT-2" }] },
        link,
      );
      const firstReview = await h.workItem(owner, runId, "review");
      expect(dueAfter(firstReview, drafted)).toBe(5 * DAY);
      const rejected = await h.decided(owner, runId, "review", "rejected", { note: "ACT-2 has no owner." });
      expect(statesOf(rejected)).toMatchObject({ draft: "ready", review: null });
      expect(rejected.data.steps.review).toMatchObject({ decision: "rejected", note: "ACT-2 has no owner." });
      expect(rejected.data.steps.draft.output.report).toBe("v1"); // #33: current until replaced
      const redrafted = await h.work(
        agent,
        runId,
        "draft",
        { report: "v2", proposedActions: [{ ref: "ACT-1" }] },
        link,
      );
      expect(redrafted.data.steps.draft).toMatchObject({
        output: { report: "v2" },
        history: [{ output: { report: "v1" } }],
      });
      const secondReview = await h.workItem(owner, runId, "review");
      expect(secondReview.id).not.toBe(firstReview.id);
      // Restarted: five days from the second readiness, not the first.
      expect(dueAfter(secondReview, redrafted)).toBe(5 * DAY);
      // Later, or the same instant on a server whose clock did not move (a manual one).
      expect(Date.parse(redrafted.run.updatedAt)).toBeGreaterThanOrEqual(Date.parse(drafted.run.updatedAt));
      await h.decided(owner, runId, "review", "approved");
      const registered = await h.work(
        agent,
        runId,
        "register_actions",
        { actionIds: ["ACT-1"], trackerView: "https://t/28" },
        link,
      );
      const view = await owner.ok("get_run", { runId });
      const closure = view.steps.find((s: Data) => s.id === "track_closure");
      expect(closure).toMatchObject({ state: "waiting", overdue: false });
      expect(dueAfter(closure, registered)).toBe(30 * DAY);
      expect((await h.workItem(owner, runId, "track_closure")).due).toBe(closure.due);
      const ended = await h.decided(owner, runId, "track_closure", "completed", {
        output: { closures: [{ issue: "ACT-1" }], closureSummary: "Done." },
        ...link,
      });
      expect(ended.run.outcome).toBe("closed");
    });

    it("[#31] history keeps every earlier completion oldest first, each entry with the fields of a current record (§3.1)", async () => {
      const agent = await h.agent("a_31");
      const editor = await h.person("ed31@example.com", ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      for (const [revision, note] of [
        ["r1", "Too long."],
        ["r2", "Still long."],
      ] as const) {
        await h.work(agent, runId, "draft", { revision });
        await h.decided(editor, runId, "editor_review", "rejected", { note });
      }
      await h.work(agent, runId, "draft", { revision: "r3" });
      const ended = await h.decided(editor, runId, "editor_review", "approved");
      const { draft, editor_review: review } = ended.data.steps;
      expect(draft.output).toEqual({ revision: "r3" });
      expect(draft.history.map((e: Data) => e.output.revision)).toEqual(["r1", "r2"]);
      expect(review.decision).toBe("approved");
      expect(review.history.map((e: Data) => [e.decision, e.note])).toEqual([
        ["rejected", "Too long."],
        ["rejected", "Still long."],
      ]);
      for (const record of [draft, review]) {
        const fields = Object.keys(record)
          .filter((k) => k !== "history" && k !== "note")
          .sort();
        for (const entry of record.history)
          expect(
            Object.keys(entry)
              .filter((k) => k !== "note")
              .sort(),
          ).toEqual(fields);
        const times = [...record.history, record].map((e: Data) => Date.parse(e.at));
        expect([...times].sort((a, b) => a - b)).toEqual(times);
      }
    });
  });
}
