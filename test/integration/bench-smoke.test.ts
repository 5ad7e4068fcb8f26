import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { TABLE_HEADER } from "../../bench/report.ts";
import { REPO } from "../support/deploy.ts";

const run = promisify(execFile);

/**
 * Issue #15 item 3 ("a smoke test only proves the driver runs"): `pnpm bench` in both modes, about
 * two seconds each with a few clients, against `baton dev` and the distributed deployment from the
 * sources (no build, to stay short). It asserts what the report must hold — the ratio line, the table's header,
 * a table row and no errors — and never a speed: benchmarks are not pass/fail tests.
 */
describe("pnpm bench, briefly (issue #15)", () => {
  it("runs the closed loop and the arrival mode on both deployments and prints the ratio, the table and 0 errors", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        join(REPO, "bench/transitions.ts"),
        "--mode",
        "both",
        "--seconds",
        "2",
        "--clients",
        "2",
        "--rate",
        "5",
        "--people",
        "1",
        "--deployment",
        "both",
        "--source",
        // The smoke test reads no commit split, so it does not wait for PostgreSQL's statistics.
        "--stats-wait",
        "0",
      ],
      { cwd: REPO, timeout: 150_000, maxBuffer: 4 * 1024 * 1024 },
    );
    expect(stdout.match(/^ratio Baton \/ PostgreSQL: \d+\.\d{3}$/gm)).toHaveLength(2);
    expect(stdout.match(/^Baton \(MCP over HTTP, .*\): \d+ transitions\/s \(0 errors\)$/gm)).toHaveLength(2);
    expect(stdout.match(/^arrival: 5 runs\/s offered for 2 s .*, 0 errors$/gm)).toHaveLength(2);
    expect(stdout).toMatch(/^PostgreSQL commits per transition: \d+\.\d\d \(write /m);
    expect(stdout).toMatch(/^ready → claim ms p50\/p95\/p99: /m);
    expect(stdout).toContain(TABLE_HEADER);
    for (const start of ["| embedded | 1 (in process) |", "| distributed | 1 |"]) {
      const row = stdout.split("\n").find((l) => l.startsWith(start));
      expect(row, stdout).toBeDefined();
      // The last column is the row's error count.
      expect(row?.split("|").at(-2)?.trim()).toBe("0");
    }
    expect(stdout).toContain("modeled rate at N cores = N × 1000 / (server CPU ms per transition)");
  });
});
