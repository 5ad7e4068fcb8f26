import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Data, type Harness, PROCESSES_DIR, refused, rid, statesOf } from "./support.ts";

/**
 * The checklist's "two servers could behave differently" table (items #1–#100), for the rows that a
 * run over MCP can show and that no scenario above already shows. Rows about parsing and validation
 * alone are proven by `libs/process`'s unit tests; a few are replayed here through publication to
 * show the server refuses what the validator refuses.
 */
export function divergenceScenarios(h: Harness): void {
  describe("checklist divergences #1–#100", () => {
    it("#2 #3 #4 #5 #22 publication refuses duplicate keys, a folder/name mismatch, unknown and x- keys, a last step without next (§2.1, §2.2)", async () => {
      const dir = mkdtempSync(join(tmpdir(), "baton-refusals-"));
      const write = (folder: string, frontmatter: string) => {
        mkdirSync(join(dir, folder));
        writeFileSync(join(dir, folder, "PROCESS.md"), `---\n${frontmatter}\n---\n# Body\n`);
        return join(dir, folder);
      };
      const ok = "description: d.\nsteps:\n  - id: a\n    agent: Do.\n  - id: done\n    finish: ok";
      try {
        const cases: [string, RegExp][] = [
          [write("dup-keys", `name: dup-keys\nname: dup-keys\n${ok}`), /duplicate/i],
          [write("folder-a", `name: folder-b\n${ok}`), /folder/i],
          [write("unknown-key", `name: unknown-key\nowner: me\n${ok}`), /owner: unknown field/],
          [write("x-key", `name: x-key\nx-team: core\n${ok}`), /x-team: unknown field/],
          [
            write(
              "no-next",
              "name: no-next\ndescription: d.\nsteps:\n  - id: a\n    finish: ok\n  - id: b\n    agent: Do.",
            ),
            /next/,
          ],
        ];
        for (const [folder, pattern] of cases)
          await expect(h.baton.publish(folder, {})).rejects.toThrow(pattern);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("#7 a run pins its version; start_run takes an older version; list_processes shows the latest (§6 rule 5, tools.md start_run)", async () => {
      const org = "versions-org";
      const v1 = await h.baton.publish(join(PROCESSES_DIR, "drafting"), { editor: "g_one" }, org);
      const v2 = await h.baton.publish(join(PROCESSES_DIR, "drafting"), { editor: "g_two" }, org);
      expect([v1.version, v2.version, v2.unchanged]).toEqual([1, 2, false]);
      const again = await h.baton.publish(join(PROCESSES_DIR, "drafting"), { editor: "g_two" }, org);
      expect(again).toMatchObject({ version: 2, unchanged: true });
      const agent = await h.agent("a_v", org);
      const person = await h.person("p_v@example.com", [], { org });
      const latest = await person.ok("start_run", { process: "drafting", inputs: {} });
      const old = await person.ok("start_run", { process: "drafting", version: 1, inputs: {} });
      expect([latest.run.version, old.run.version]).toEqual([2, 1]);
      await h.work(agent, old.run.id, "draft", { revision: "r" });
      expect((await person.ok("get_run", { runId: old.run.id })).workItems[0].assignedTo).toEqual({
        group: "g_one",
      });
      refused(await person.write("start_run", { process: "drafting", version: 3, inputs: {} }), "not_found");
      refused(await person.write("start_run", { process: "no-such-process", inputs: {} }), "not_found");
      const list = await agent.ok("list_processes");
      expect(list.items).toEqual([
        { name: "drafting", description: expect.any(String), version: 2, inputs: {} },
      ]);
    });

    it("#9 #11 #12 #13 #14 #17 inputs: one_of (inside lists too), null is not a value, real dates and offsets, numbers not rounded, person values, undeclared fields — every issue at once (§2.3)", async () => {
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

    it("#16 an argument the tool does not take is invalid; an undeclared output field is not_accepted (§6 rule 3)", async () => {
      const agent = await h.agent("a_16");
      const runId = (await agent.ok("start_run", { process: "triage", inputs: { ticket: "T", team: "red" } }))
        .run.id;
      const claim = await h.claim(agent, runId, "classify");
      refused(
        await agent.write("submit", {
          token: claim.token,
          output: { label: "x" },
          summary: "s",
          priority: 1,
        }),
        "invalid",
        ["priority: not an argument of this tool"],
      );
      refused(
        await agent.write("submit", {
          token: claim.token,
          output: { label: "x", priority: 1 },
          summary: "s",
        }),
        "not_accepted",
        ["output.priority: not declared"],
      );
    });

    it("#25 #27 a person finishing an escalated step with a route list chooses next with a non-blank reason (§3.2, tools.md decide)", async () => {
      const agent = await h.agent("a_25");
      const ops = await h.operator("ops25@example.com");
      const runId = (
        await agent.ok("start_run", { process: "support-escalation", inputs: { ticketId: "T-25" } })
      ).run.id;
      const claim = await h.claim(agent, runId, "diagnose");
      const output = { diagnosis: "d", attemptedFixes: "f" };
      const evidence = [{ kind: "link", ref: "T-25" }];
      refused(
        await agent.write("submit", {
          token: claim.token,
          output,
          evidence,
          summary: "s",
          next: "confirm",
          reason: "  ",
        }),
        "not_accepted",
        ["reason: required"],
      );
      await agent.ok("escalate", { token: claim.token, note: "Need a human call." });
      refused(await h.decide(ops, runId, "diagnose", "completed", { output, evidence }), "not_accepted", [
        "next: required, one of confirm, tier1_handoff",
        "reason: required",
      ]);
      // The person's reason must be non-blank too, as the agent's.
      refused(
        await h.decide(ops, runId, "diagnose", "completed", {
          output,
          evidence,
          next: "tier1_handoff",
          reason: " \t ",
        }),
        "not_accepted",
        ["reason: required"],
      );
      const done = await h.decided(ops, runId, "diagnose", "completed", {
        output,
        evidence,
        next: "tier1_handoff",
        reason: "Needs reproduction.",
      });
      expect(done.data.steps.diagnose).toMatchObject({
        next: "tier1_handoff",
        reason: "Needs reproduction.",
        by: "ops25@example.com",
      });
      expect(statesOf(done)).toMatchObject({ diagnose: "done", tier1_handoff: "waiting", confirm: null });
    });

    it("#40 #43 a claim and a renew expire now + leaseSeconds; #45 #48 there is no release or agent-fail tool (§3.3)", async () => {
      const agent = await h.agent("a_40");
      const lease = (await agent.ok("describe")).leaseSeconds * 1000;
      const runId = (await agent.ok("start_run", { process: "triage", inputs: { ticket: "T", team: "red" } }))
        .run.id;
      const claim = await h.claim(agent, runId, "classify");
      const claimedAt = Date.parse((await agent.ok("get_run", { runId })).run.updatedAt);
      expect(Date.parse(claim.expiresAt) - claimedAt).toBe(lease);
      const renewed = await agent.ok("renew", { token: claim.token });
      const renewedAt = Date.parse((await agent.ok("get_run", { runId })).run.updatedAt);
      expect(Date.parse(renewed.expiresAt) - renewedAt).toBe(lease);
      const tools = (await agent.tools()).map((t) => t.name);
      expect(tools).not.toContain("release");
      expect(tools).not.toContain("fail");
    });

    it("#53 upload takes a requestId; #91 an upload of another organization is not found (tools.md upload, §5)", async () => {
      const agent = await h.agent("a_53");
      refused(
        await agent.call("upload", { fileName: "a.txt", contentType: "text/plain", contentBase64: "YQ==" }),
        "invalid",
        ["requestId: required"],
      );
      const org = "files-org";
      await h.baton.publish(join(PROCESSES_DIR, "drafting"), { editor: "editor" }, org);
      const foreign = await h.upload(await h.agent("a_53", org), "foreign bytes");
      const editor = await h.person("ed53@example.com", ["editor"]);
      const contract = (
        await editor.ok("start_run", {
          process: "contract-review",
          inputs: { contractId: "C", document: "D", owner: "ed53@example.com" },
        })
      ).run.id;
      refused(
        await h.decide(editor, contract, "prepare", "completed", {
          output: { revision: "r", summary: "s" },
          evidence: [{ kind: "file", ref: foreign.id }],
        }),
        "not_accepted",
        [`evidence ${foreign.id}: not found`, "evidence: file required"],
      );
    });

    it("#66 #86 a link is recorded as stated, with no url added; extra evidence items of any kind are kept (§5)", async () => {
      const agent = await h.agent("a_66");
      const runId = (
        await agent.ok("start_run", { process: "support-escalation", inputs: { ticketId: "T-66" } })
      ).run.id;
      const file = await h.upload(agent, "log excerpt", "log.txt");
      const view = await h.work(
        agent,
        runId,
        "diagnose",
        { diagnosis: "d", attemptedFixes: "f" },
        {
          evidence: [
            { kind: "link", ref: "DOC-42 rev 3" },
            { kind: "file", ref: file.id },
            { kind: "link", ref: "https://support/T-66" },
          ],
          next: "tier1_handoff",
          reason: "r",
        },
      );
      expect(view.data.steps.diagnose.evidence).toEqual([
        { kind: "link", ref: "DOC-42 rev 3" },
        { kind: "file", ref: file.id, sha256: file.sha256, url: expect.any(String) },
        { kind: "link", ref: "https://support/T-66" },
      ]);
    });

    it("#69 #70 anyone in the organization reads a run, no one outside it; get_work never lists a step another agent holds (§4.1, tools.md get_work)", async () => {
      const agent = await h.agent("a_69");
      const other = await h.agent("b_69");
      const runId = (await agent.ok("start_run", { process: "triage", inputs: { ticket: "T", team: "red" } }))
        .run.id;
      const stranger = await h.person("stranger@example.com");
      expect((await stranger.ok("get_run", { runId })).run.id).toBe(runId);
      const outsider = await h.person("outsider@example.com", [], { org: "elsewhere" });
      refused(await outsider.call("get_run", { runId }), "not_found");
      refused(await outsider.write("cancel", { runId, reason: "x" }), "not_found");
      await h.claim(agent, runId, "classify");
      expect(await h.agentItem(other, runId, "classify")).toBeUndefined();
      expect(await h.agentItem(agent, runId, "classify")).toBeUndefined();
      const view = await stranger.ok("get_run", { runId });
      expect(JSON.stringify(view)).not.toContain("token");
    });

    it("#81 the same business event sent twice with new requestIds is two deliveries (§3.6, §4)", async () => {
      const sender = await h.agent("a_81");
      const runId = (await sender.ok("start_run", { process: "two-waits", inputs: {} })).run.id;
      const data = { settlement: "SET-1" };
      expect(await sender.ok("send_event", { runId, name: "ping", data, requestId: rid() })).toEqual({
        consumedBy: "first",
      });
      expect(await sender.ok("send_event", { runId, name: "ping", data, requestId: rid() })).toEqual({
        consumedBy: "second",
      });
      const view: Data = await sender.ok("get_run", { runId });
      expect(view.run.outcome).toBe("pinged");
    });
  });
}
