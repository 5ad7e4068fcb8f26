import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { McpSession } from "../mcp.ts";
import { type Data, type Harness, PROCESSES_DIR, refused } from "../support.ts";

/**
 * Reads (§4.1, tools.md): who may read a run, what `get_work` lists, paging and filters.
 */
/**
 * `ids` lists exactly `expected`, oldest first by `at` (epoch ms per id): times never go back, and
 * ids with different times keep the order of `expected` (the order they were made in). Equal times
 * may come in any order (tools.md says "oldest first" and nothing of ties).
 */
function expectOldestFirst(ids: string[], at: Map<string, number>, expected: string[]): void {
  expect([...ids].sort()).toEqual([...expected].sort());
  const times = ids.map((id) => at.get(id) as number);
  expect(times).toEqual([...times].sort((p, q) => p - q));
  for (let a = 0; a < ids.length; a++)
    for (let b = a + 1; b < ids.length; b++)
      if (times[a] !== times[b])
        expect(expected.indexOf(ids[a] as string)).toBeLessThan(expected.indexOf(ids[b] as string));
}

export function readScenarios(h: Harness): void {
  describe("§4.1 reads: get_run, get_work, list_runs and list_processes", () => {
    it("[#98 #99 R3-Q11 get_work.invalid:paging list_runs.invalid:paging list_processes.invalid:paging] paging: get_work oldest first with cursor and limit 1–100 for agents and people; list_runs filters by process, state and inputs with paging; list_processes pages (tools.md; issue #4 deliver 8)", async () => {
      const org = h.org("paging-org");
      await h.publish(join(PROCESSES_DIR, "triage"), {}, org);
      await h.publish(join(PROCESSES_DIR, "drafting"), { editor: "editor" }, org);
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
      // Oldest first by readySince; steps made ready at the same instant (a server whose clock did
      // not move, such as a manual one) may come in any order among themselves.
      expectOldestFirst(
        items.map((i: Data) => i.runId),
        new Map(items.map((i: Data) => [i.runId, Date.parse(i.readySince)])),
        started,
      );
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
      const opened = new Map<string, number>();
      for (let i = 0; i < 3; i++) {
        const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
        // The review opens in the write that completes the draft: at the run's updatedAt.
        const view = await h.work(agent, runId, "draft", { revision: `r${i}` });
        opened.set(runId, Date.parse(view.run.updatedAt));
        reviews.push(runId);
      }
      const inbox = (await pageAll(editor, "get_work", { limit: 1 })).flat();
      expectOldestFirst(
        inbox.map((e: Data) => e.runId),
        opened,
        reviews,
      );
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
      const catalog = h.org("catalog-org");
      const dir = mkdtempSync(join(tmpdir(), "baton-catalog-"));
      try {
        for (let i = 1; i <= 23; i++) {
          const name = `catalog-${String(i).padStart(2, "0")}`;
          mkdirSync(join(dir, name));
          writeFileSync(
            join(dir, name, "PROCESS.md"),
            `---\nname: ${name}\ndescription: Catalog entry ${i}.\nsteps:\n  - id: only\n    agent: Do it.\n  - id: done\n    finish: done\n---\n`,
          );
          await h.publish(join(dir, name), {}, catalog);
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

    it("[#69 #70 get_run.not_found cancel.not_found] anyone in the organization reads a run, no one outside it; get_work never lists a step another agent holds (§4.1, tools.md get_work)", async () => {
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
