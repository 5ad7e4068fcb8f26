import { describe, expect, it } from "vitest";
import { type Harness, refused } from "../support.ts";

/**
 * Field values (§2.3): inputs checked at `start_run`, outputs of agents and people, every issue at once.
 */
export function fieldScenarios(h: Harness): void {
  describe("§2.3 fields: inputs at start_run, outputs at submit and decide", () => {
    it("[#9 #10 #11 #12 #13 #14 #17 start_run.invalid:inputs] inputs: one_of (inside lists too), null is not a value, real dates and offsets, numbers not rounded, person values, undeclared fields — every issue at once (§2.3)", async () => {
      const agent = await h.agent("a_inputs");
      const start = (process: string, inputs: Record<string, unknown>) =>
        agent.write("start_run", { process, inputs });
      expect(
        refused(
          await start("triage", {
            ticket: "T",
            team: "green",
            notes: null,
            labels: ["bug", "feature"],
            extra: 1,
          }),
          "invalid",
        ).issues,
      ).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^inputs\.team: "green" is not one of/),
          expect.stringMatching(/^inputs\.notes: /),
          expect.stringMatching(/^inputs\.labels\[1\]: "feature" is not one of/),
          "inputs.extra: not declared",
        ]),
      );
      const person = await h.person("p_inputs@example.com");
      const onboarding = {
        employeeId: "E",
        employeeName: "N",
        startDate: "2026-02-30",
        hiringManager: "not-an-email",
      };
      const issues = refused(
        await person.write("start_run", { process: "employee-onboarding", inputs: onboarding }),
        "invalid",
      ).issues;
      expect(issues).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^inputs\.startDate: /),
          expect.stringMatching(/^inputs\.hiringManager: /),
        ]),
      );
      const blog = await person.write("start_run", {
        process: "blog-publication",
        inputs: { brief: "b", slug: "s", publishAt: "2026-10-06T10:00:00" },
      });
      expect(refused(blog, "invalid").issues).toEqual([expect.stringMatching(/^inputs\.publishAt: /)]);
      // An integer beyond ±2^53 is refused, never stored changed (ARCHITECTURE "Numbers are never rounded").
      const precise = await agent.write("start_run", {
        process: "supplier-onboarding",
        inputs: { vendorName: "A", amount: 2 ** 53 + 2 },
      });
      expect(refused(precise, "invalid").issues?.[0]).toMatch(/^inputs\.amount: /);
      const exact = await agent.ok("start_run", {
        process: "supplier-onboarding",
        inputs: { vendorName: "A", amount: 0.1 },
      });
      expect(exact.data.inputs.amount).toBe(0.1);
    });

    it("[R1-8 #10 #15] incident-postmortem: lists of objects in an agent output and a person output → ended closed (§2.3)", async () => {
      const agent = await h.agent("a_pm");
      const owner = await h.person("io@example.com");
      const runId = (
        await owner.ok("start_run", {
          process: "incident-postmortem",
          inputs: { incidentId: "INC-8", incidentOwner: "io@example.com" },
        })
      ).run.id;
      const link = { evidence: [{ kind: "link", ref: "https://inc/8" }] };
      const proposedActions = [
        { deliverable: "Alert on queue depth", owner: "ops@example.com", due: "2026-11-01" },
        { deliverable: "Runbook update", owner: "sre@example.com", due: "2026-11-15" },
      ];
      const drafted = await h.work(
        agent,
        runId,
        "draft",
        { report: "Timeline and impact.", proposedActions },
        link,
      );
      expect(drafted.data.steps.draft.output.proposedActions).toEqual(proposedActions);
      await h.decided(owner, runId, "review", "approved");
      await h.work(
        agent,
        runId,
        "register_actions",
        { actionIds: ["ACT-1", "ACT-2"], trackerView: "https://tracker/v/8" },
        link,
      );
      const item = await h.workItem(owner, runId, "track_closure");
      expect(item.due).not.toBeNull();
      const closures = [
        { issue: "ACT-1", evidence: "https://tracker/ACT-1" },
        { issue: "ACT-2", evidence: "https://tracker/ACT-2" },
      ];
      const ended = await h.decided(owner, runId, "track_closure", "completed", {
        output: { closures, closureSummary: "Both verified." },
        ...link,
      });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "closed" });
      expect(ended.data.steps.track_closure.output.closures).toEqual(closures);
      expect(ended.data.steps.draft.output.proposedActions).toEqual(proposedActions);
    });
  });
}
