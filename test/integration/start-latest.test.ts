import { randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEPLOYMENTS, type Deployment, REPO } from "../support/deploy.ts";

/**
 * `start_run` without a version takes the latest published version (tools.md start_run, §6 rule 5),
 * even though the engine reads nothing before a start's one commit (issue #15): it computes the run
 * on the latest version it holds in memory, and the commit itself refuses it when a later version
 * was published since (migration 0006), so the engine reads the new latest and computes again.
 */
describe.each(DEPLOYMENTS)("start_run and the latest version — %s", (_label, start) => {
  let baton: Deployment;
  let dir: string;
  beforeAll(async () => {
    baton = await start();
    dir = mkdtempSync(join(tmpdir(), "baton-latest-"));
  }, 120_000);
  afterAll(async () => {
    await baton?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** Publishes bench-step with `description` (a new description is a new version). */
  async function publish(description: string): Promise<number> {
    const folder = join(dir, `v-${randomUUID()}`, "bench-step");
    cpSync(join(REPO, "bench/processes/bench-step"), folder, { recursive: true });
    const file = join(folder, "PROCESS.md");
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(/^description: .*$/m, `description: ${description}`),
    );
    return (await baton.publish(folder)).version;
  }

  it("a start right after a publication runs on the new version; a replay of an earlier start still answers its own run on the old one (tools.md start_run, §4, §6 rule 5)", async () => {
    expect(await publish("First.")).toBe(1);
    const agent = await baton.session({ kind: "agent", id: "a_latest" });
    try {
      const first = { process: "bench-step", inputs: { n: 1 }, requestId: randomUUID() };
      const a = await agent.ok("start_run", first);
      expect(a.run.version).toBe(1);
      // The engine now holds version 1 as the latest; each publication below is followed at once
      // by a start that must see it.
      for (const version of [2, 3]) {
        expect(await publish(`Version ${version}.`)).toBe(version);
        const b = await agent.ok("start_run", {
          process: "bench-step",
          inputs: { n: 2 },
          requestId: randomUUID(),
        });
        expect(b.run.version).toBe(version);
      }
      const pinned = await agent.ok("start_run", {
        process: "bench-step",
        version: 1,
        inputs: { n: 3 },
        requestId: randomUUID(),
      });
      expect(pinned.run.version).toBe(1);
      // The replay answers the recorded result: the same run, on version 1 (§4).
      const replay = await agent.ok("start_run", first);
      expect(replay.run).toEqual(a.run);
      // The same requestId with other arguments is a conflict, not a new run (§4).
      const other = await agent.write("start_run", { ...first, inputs: { n: 9 } });
      expect(other.ok ? null : other.error.code).toBe("conflict");
    } finally {
      await agent.close();
    }
  });
});
