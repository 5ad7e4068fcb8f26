import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployment, REPO, startEmbedded } from "../support/deploy.ts";
import { METRIC_NAMES, metricSum } from "../support/metrics.ts";

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

    // Issue #13: `curl /metrics` on `baton dev`'s own port after the walk shows every metric, with
    // tool calls, tool duration, transitions and bus requests (in process here) non-zero.
    const base = baton.url.replace(/\/mcp$/, "");
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    for (const name of METRIC_NAMES) expect(text).toContain(`# TYPE ${name} `);
    expect(text).toMatch(/baton_tool_calls_total\{tool="decide",outcome="ok"\} [1-9]/);
    expect(metricSum(text, "baton_tool_duration_seconds_count")).toBeGreaterThanOrEqual(3);
    expect(metricSum(text, "baton_transitions_total")).toBeGreaterThanOrEqual(3);
    expect(metricSum(text, "baton_bus_request_duration_seconds_count")).toBeGreaterThan(0);
    expect(metricSum(text, "baton_partitions_owned")).toBe(64);
    expect(text).not.toContain(runView.id);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: unknown }).checks).toMatchObject({
      pglite: "ok",
      partitions: "ok",
      blob_dir: "ok",
    });
  });
});
