import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployment, REPO, startEmbedded } from "../support/deploy.ts";

const run = promisify(execFile);

/**
 * The README's "Walk a run" blocks, run as a newcomer pastes them (issue #2: "a newcomer following
 * only the README can … walk a run to its end"), against `baton dev --port 0`. Only `pnpm` is
 * stood in for, by the CLI it runs, pointed at this server's data directory.
 */
describe("README: Walk a run", () => {
  let baton: Deployment;

  beforeAll(async () => {
    baton = await startEmbedded();
  });
  afterAll(async () => {
    await baton?.stop();
  });

  it("the blocks, pasted in order, walk expense-approval to outcome approved", async () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    const start = readme.indexOf("## Walk a run");
    const section = readme.slice(start, readme.indexOf("\n## ", start));
    const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    expect(blocks.length).toBe(2);
    const cli = join(REPO, "services/cli/src/main.ts");
    const script = [
      "set -e",
      // `pnpm --silent baton <args>` as the README writes it, run by the CLI for this server.
      `pnpm() { shift 2; node --import tsx ${JSON.stringify(cli)} "$@" --data-dir "$BATON_DIR"; }`,
      ...blocks,
    ].join("\n");
    const { stdout } = await run("bash", ["-c", script], {
      cwd: REPO,
      env: { ...process.env, MCP: baton.url, BATON_DIR: baton.dataDir },
      timeout: 120_000,
    });
    // The last line is `pick data.run` of the decision: the run, as one line of JSON.
    const runView = JSON.parse(stdout.trim().split("\n").at(-1) as string);
    expect(runView).toMatchObject({ process: "expense-approval", state: "ended", outcome: "approved" });
  });
});
