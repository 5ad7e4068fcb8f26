import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runConformanceCli } from "../support/conformance-cli.ts";
import { type Deployment, startEmbedded } from "../support/deploy.ts";
import { FAULTS, type FaultProxy, startFaultProxy } from "../support/fault-proxy.ts";

/**
 * The runner catches real faults (issue #18 deliver 4): `baton conformance` against `baton dev`
 * behind a proxy that rewrites a sample of tool answers — a wrong error code, a dropped required
 * field, a reordered error check, a replay that returns a different result — fails (exit 1) with a
 * line naming the broken rule for each kind. The same checks through the proxy with no fault pass,
 * so what fails is the fault and nothing else.
 */
describe("baton conformance behind a fault-injecting proxy (issue #18)", () => {
  let baton: Deployment;
  let proxy: FaultProxy;
  beforeAll(async () => {
    baton = await startEmbedded();
    proxy = await startFaultProxy(baton.url);
  }, 240_000);
  afterAll(async () => {
    await proxy?.stop();
    await baton?.stop();
  }, 120_000);

  const only = [...new Set(FAULTS.map((f) => f.only))].join("|");

  it("with no fault, the checks the faults will break pass through the proxy", async () => {
    proxy.fault = null;
    const run = await runConformanceCli(["--url", proxy.url, "--data-dir", baton.dataDir, "--only", only]);
    expect(run.stderr + run.stdout).toMatch(/, 0 failed, /);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  });

  for (const { fault, only: pattern, rule, broken } of FAULTS) {
    it(`${fault.name}: the run fails with a line naming ${rule}`, async () => {
      proxy.fault = fault;
      proxy.rewritten = 0;
      const run = await runConformanceCli([
        "--url",
        proxy.url,
        "--data-dir",
        baton.dataDir,
        "--only",
        pattern,
      ]);
      proxy.fault = null;
      expect(proxy.rewritten, "the proxy rewrote at least one answer").toBeGreaterThan(0);
      expect(run.code, run.stdout + run.stderr).toBe(1);
      const lines = run.stdout.split("\n");
      const failed = lines.findIndex((l) => l.startsWith("FAIL") && l.includes(rule));
      expect(failed, run.stdout).toBeGreaterThanOrEqual(0);
      expect(lines[failed + 1], run.stdout).toMatch(/^ {6}broken: /);
      expect(lines.slice(failed + 1, failed + 6).join("\n"), run.stdout).toMatch(broken);
      expect(run.stdout).toMatch(/checks, \d+ passed, [1-9]\d* failed/);
    });
  }
});
