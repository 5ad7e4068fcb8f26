import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type Data,
  FIXTURES_DIR,
  type Harness,
  PROCESSES_DIR,
  PROFILE_FIXTURES,
  refused,
  sameNameBindings,
} from "../support.ts";

/**
 * What a server must refuse or accept when a process is published (§2, §7, §8) and what publishing
 * creates (§6 rule 5: numbered versions, the content hash), over the operator's publication path
 * and MCP. Rows about parsing alone are also proven by `libs/process`'s rule table.
 */
export function publicationScenarios(h: Harness): void {
  describe("publication: §2 refusals, versions and the content hash (§6 rule 5), profiles (§8)", () => {
    it("[#2 #3 #4 #5 #22] publication refuses duplicate keys, a folder/name mismatch, unknown and x- keys, a last step without next (§2.1, §2.2)", async () => {
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
        for (const [folder, pattern] of cases) await expect(h.publish(folder, {})).rejects.toThrow(pattern);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("[#6 #7 start_run.not_found] a run pins its version; start_run takes an older version; list_processes shows the latest (§6 rule 5, tools.md start_run)", async () => {
      const org = h.org("versions-org");
      const v1 = await h.publish(join(PROCESSES_DIR, "drafting"), { editor: "g_one" }, org);
      const v2 = await h.publish(join(PROCESSES_DIR, "drafting"), { editor: "g_two" }, org);
      expect([v1.version, v2.version, v2.unchanged]).toEqual([1, 2, false]);
      const again = await h.publish(join(PROCESSES_DIR, "drafting"), { editor: "g_two" }, org);
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

    it("[R2-7 #24 R2-B7 R2-B8 decide.invalid:combination] an approval with a list next is refused at publication; decide rejected carrying next/reason is invalid (§2.2, tools.md decide)", async () => {
      await expect(
        h.publish(join(PROCESSES_DIR, "approval-list-next"), { editor: "editor" }),
      ).rejects.toThrow(/steps\[1\]\.next: a list of routes is allowed only on agent and task steps/);
      const agent = await h.agent("a_writer7");
      const editor = await h.person("ed7@example.com", ["editor"]);
      const runId = (
        await editor.ok("start_run", {
          process: "blog-publication",
          inputs: { brief: "b", slug: "s", publishAt: "2026-01-01T00:00:00Z" },
        })
      ).run.id;
      await h.work(
        agent,
        runId,
        "draft",
        { revision: "r", title: "t", summary: "s" },
        { evidence: [{ kind: "link", ref: "x" }] },
      );
      const error = refused(
        await h.decide(editor, runId, "editor_review", "rejected", {
          note: "Hold it.",
          next: "draft",
          reason: "Hold.",
        }),
        "invalid",
      );
      expect(error.issues).toEqual([
        'next: only with decision "completed", not "rejected"',
        'reason: only with decision "completed", not "rejected"',
      ]);
    });

    it("[R2-10 #4] a step with an invented branches key is refused at publication as an unknown key (§2.1, §2.2); the parallel form is R3-1", async () => {
      await expect(
        h.publish(join(PROCESSES_DIR, "branches-key"), {
          "operations-lead": "o",
          "security-lead": "s",
        }),
      ).rejects.toThrow(/steps\[1\]\.branches: unknown field/);
    });

    it("[#97] a process needing a profile publishes exactly when describe lists the profile: major-incident (parallel-1) and vendor-check (check-1) are in the catalog, each refused where the profile is not offered (§8; conformance/README.md)", async () => {
      const reader = await h.agent("a_r3");
      const offered: string[] = (await reader.ok("describe")).profiles;
      // Every page of the catalog, so a catalog longer than one page cannot hide them.
      const names: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Data = await reader.ok("list_processes", cursor ? { cursor } : {});
        names.push(...page.items.map((p: Data) => p.name));
        cursor = page.nextCursor;
      } while (cursor);
      expect(names).toContain("major-incident-response");
      for (const [name, profile] of Object.entries(PROFILE_FIXTURES)) {
        const folder = join(FIXTURES_DIR, name);
        if (offered.includes(profile)) {
          expect(names, name).toContain(name);
          // Published already: the same content and bindings publish nothing new (§6 rule 5).
          expect(await h.publish(folder, sameNameBindings(folder))).toMatchObject({ unchanged: true });
        } else {
          expect(names, name).not.toContain(name);
          await expect(h.publish(folder, sameNameBindings(folder))).rejects.toThrow(
            new RegExp(`needs the ${profile} profile`),
          );
        }
      }
    });

    it("[#1 #6 #18 #19 #20 #24 #30 #59 #71 #89-90 #94 #100 W5] publication refuses what §2 refuses — an author version, on_timeout without timeout, the removed overdue, files and x-content-hash keys, a cycle, an unreachable step, a route list on a wait, a dotted role, a malformed duration — and reads yes and no as strings (§2.1–§2.4)", async () => {
      const org = h.org("section2-org");
      const dir = mkdtempSync(join(tmpdir(), "baton-section2-"));
      const write = (name: string, frontmatter: string) => {
        mkdirSync(join(dir, name));
        writeFileSync(join(dir, name, "PROCESS.md"), `---\nname: ${name}\n${frontmatter}\n---\n# ${name}\n`);
        return join(dir, name);
      };
      const done = "  - id: done\n    finish: ok";
      try {
        const cases: [string, string, RegExp][] = [
          ["author-version", `description: d.\nversion: 3\nsteps:\n${done}`, /version: unknown field/],
          [
            "timeout-less",
            `description: d.\nsteps:\n  - id: w\n    wait_for: paid\n    on_timeout: chase\n  - id: chase\n    agent: Chase.\n${done}`,
            /on_timeout: needs timeout/,
          ],
          [
            "overdue-key",
            `description: d.\nsteps:\n  - id: a\n    agent: Do.\n    due: 1d\n    overdue: chase\n  - id: chase\n    agent: Chase.\n${done}`,
            /overdue: unknown field/,
          ],
          ["files-key", `description: d.\nfiles: [contract.pdf]\nsteps:\n${done}`, /files: unknown field/],
          [
            "hash-key",
            `description: d.\nx-content-hash: abc\nsteps:\n${done}`,
            /x-content-hash: unknown field/,
          ],
          [
            "cycle",
            `description: d.\nsteps:\n  - id: a\n    agent: A.\n    next: b\n  - id: b\n    agent: B.\n    next: [a, done]\n${done}`,
            /creates a cycle/,
          ],
          [
            "unreachable",
            `description: d.\nsteps:\n  - id: a\n    agent: A.\n    next: done\n  - id: lost\n    agent: Nobody comes here.\n    next: done\n${done}`,
            /cannot be reached from the first step/,
          ],
          [
            "wait-routes",
            `description: d.\nsteps:\n  - id: w\n    wait: 1h\n    next: [a, done]\n  - id: a\n    agent: A.\n${done}`,
            /a list of routes is allowed only on agent and task steps/,
          ],
          [
            "dotted-role",
            `description: d.\nsteps:\n  - id: t\n    task: Do it.\n    person: finance.team\n${done}`,
            /"finance\.team" is not a valid path/,
          ],
          [
            "bad-duration",
            `description: d.\nsteps:\n  - id: a\n    agent: A.\n    due: 2 days\n${done}`,
            /due: not a duration/,
          ],
        ];
        for (const [name, frontmatter, pattern] of cases)
          await expect(h.publish(write(name, frontmatter), {}, org), name).rejects.toThrow(pattern);

        // YAML 1.2 core schema: yes and no are strings, in a description, a one_of and an outcome.
        await h.publish(
          write(
            "yes-no",
            "description: yes\ninputs:\n  answer: { type: string, one_of: [yes, no] }\nsteps:\n  - id: done\n    finish: no",
          ),
          {},
          org,
        );
        const agent = await h.agent("a_yes", org);
        const listed = (await agent.ok("list_processes")).items;
        expect(listed.map((p: Data) => p.name)).toEqual(["yes-no"]);
        expect(listed[0]).toMatchObject({
          description: "yes",
          inputs: { answer: { one_of: ["yes", "no"] } },
        });
        refused(await agent.write("start_run", { process: "yes-no", inputs: { answer: true } }), "invalid");
        const run = await agent.ok("start_run", { process: "yes-no", inputs: { answer: "no" } });
        expect(run.run).toMatchObject({ state: "ended", outcome: "no" });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("[#93 #95] the content hash covers the parsed frontmatter and the body as written: the same file again is unchanged; a changed body, or the long form of a shorthand field, is a new version (§6 rule 5)", async () => {
      const org = h.org("hash-org");
      const dir = mkdtempSync(join(tmpdir(), "baton-hash-"));
      const folder = join(dir, "hashed");
      mkdirSync(folder);
      const write = (input: string, body: string) =>
        writeFileSync(
          join(folder, "PROCESS.md"),
          `---\nname: hashed\ndescription: d.\ninputs:\n  note: ${input}\nsteps:\n  - id: done\n    finish: ok\n---\n${body}`,
        );
      try {
        write("string", "# Hashed\n");
        expect(await h.publish(folder, {}, org)).toMatchObject({ version: 1, unchanged: false });
        expect(await h.publish(folder, {}, org)).toMatchObject({ version: 1, unchanged: true });
        write("string", "# Hashed\n\nNow with a paragraph.\n");
        expect(await h.publish(folder, {}, org)).toMatchObject({ version: 2, unchanged: false });
        write("{ type: string }", "# Hashed\n\nNow with a paragraph.\n");
        expect(await h.publish(folder, {}, org)).toMatchObject({ version: 3, unchanged: false });
        expect(await h.publish(folder, {}, org)).toMatchObject({ version: 3, unchanged: true });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
