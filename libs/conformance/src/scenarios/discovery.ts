import { describe, expect, it } from "vitest";
import type { Data, Harness } from "../support.ts";

/**
 * What a client learns before its first run: `describe` and `list_processes` (tools.md), and what the
 * specification removed staying absent.
 */
export function discoveryScenarios(h: Harness): void {
  describe("tools.md describe and list_processes", () => {
    it("[R2-discovery #8 #44 #96 #100] describe and list_processes answer with the shapes round 2 projects (tools.md describe, list_processes)", async () => {
      const agent = await h.agent("a_discovery");
      const d = await agent.ok("describe");
      expect(d).toMatchObject({
        protocol: "agentprocess",
        version: "core-2",
        leaseSeconds: 600,
        person: { format: "email" },
        maxUploadBytes: 10 * 1024 * 1024,
      });
      // §8: what the server implements, each profile once. A target whose evaluator the test scripts
      // (Baton's own suite) has one configured, so check-1 is offered with parallel-1 (check.md
      // preamble: "lists it only while an evaluator is configured"), with the check limits of
      // check.md §5 at the server defaults.
      expect(new Set(d.profiles).size).toBe(d.profiles.length);
      for (const p of d.profiles) expect(["parallel-1", "check-1"]).toContain(p);
      if (h.target.evaluator) {
        expect(d.profiles).toEqual(["parallel-1", "check-1"]);
        expect(d.limits).toEqual({
          runDataBytes: 262_144,
          checkPass: 0.9,
          checkFail: null,
          checkConfidence: 0.8,
          checkStateBytes: 65_536,
        });
      }
      expect(d.tools).toEqual(
        expect.arrayContaining([
          "describe",
          "list_processes",
          "start_run",
          "get_run",
          "get_work",
          "claim",
          "submit",
          "escalate",
          "decide",
          "cancel",
          "renew",
          "upload",
          "send_event",
          "list_runs",
        ]),
      );
      const list = await agent.ok("list_processes");
      const invoice = list.items.find((p: Data) => p.name === "invoice-approval");
      expect(invoice).toEqual({
        name: "invoice-approval",
        description: expect.any(String),
        version: 1,
        inputs: { invoiceId: "string", invoiceDocument: "string", manager: "person" },
      });
    });

    it("[#30 #36-37 #89-90 R2-B16] what the specification removed stays removed: no retry or download tool, no accepted flag on a submission's run view, only consumedBy from send_event (tools.md)", async () => {
      const agent = await h.agent("a_removed");
      const tools = (await agent.tools()).map((t) => t.name);
      const advertised = (await agent.ok("describe")).tools;
      for (const gone of ["retry", "download"]) {
        expect(tools).not.toContain(gone);
        expect(advertised).not.toContain(gone);
      }
      const runId = (await agent.ok("start_run", { process: "triage", inputs: { ticket: "T", team: "red" } }))
        .run.id;
      const view = await h.work(agent, runId, "classify", { label: "bug" });
      expect(Object.keys(view).sort()).toEqual(["body", "data", "run", "steps", "workItems"]);
      const waits = (await agent.ok("start_run", { process: "two-waits", inputs: {} })).run.id;
      expect(Object.keys(await agent.ok("send_event", { runId: waits, name: "ping" }))).toEqual([
        "consumedBy",
      ]);
    });
  });
}
