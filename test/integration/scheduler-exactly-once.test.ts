import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processFolder } from "../support/clock.ts";
import { type DistributedDeployment, startDistributed } from "../support/deploy.ts";
import { journalOf, tickCounts, timersOf } from "../support/journal.ts";
import type { McpSession } from "../support/mcp.ts";

/**
 * Issue #5 "Exactly once": a timer fires once with two scheduler replicas racing for it, and once
 * when a scheduler is killed with SIGKILL between taking a timer and the transition's commit, then
 * restarted. Real PostgreSQL and NATS, every service its own `baton serve` process, real time: the
 * timers are claim leases of one second (`BATON_LEASE_SECONDS=1`). Fired timers are counted from the
 * journal: one `tick` row per run, since each run has exactly one timer and nothing else touches it.
 * The kill is the scheduler's test hook `BATON_SCHEDULER_FAULT` (it SIGKILLs itself).
 */

const PROBE = `
description: One agent step, whose claim lease is the timer under test.
steps:
  - id: work
    agent: Do the work.
  - id: done
    finish: done
`;

/**
 * Resolves when `child` exits, with `SIGKILL` when it (or the node process tsx runs for it, which
 * tsx reports as exit code 128 + 9) was killed that way; rejects after `timeoutMs`.
 */
function exited(child: ChildProcess, timeoutMs: number): Promise<NodeJS.Signals | number | null> {
  const how = (code: number | null, signal: NodeJS.Signals | null) =>
    signal ?? (code === 128 + 9 ? "SIGKILL" : code);
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null)
      return resolve(how(child.exitCode, child.signalCode));
    const timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms`)), timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(how(code, signal));
    });
  });
}

describe("scheduler exactly once — distributed (baton serve over NATS and PostgreSQL)", () => {
  let baton: DistributedDeployment;
  let agent: McpSession;

  beforeAll(async () => {
    baton = await startDistributed({
      schedulers: 0,
      env: {
        BATON_LEASE_SECONDS: "1",
        BATON_SCHEDULER_POLL_MS: "200",
        // A killed replica's claims expire after this; a live one releases its own at once.
        BATON_SCHEDULER_CLAIM_MS: "2000",
      },
    });
    await baton.publish(processFolder("lease-probe", PROBE));
    agent = await baton.session({ kind: "agent", id: "a_probe" });
  });

  afterAll(async () => {
    await agent?.close();
    await baton?.stop();
  });

  /** Starts `n` runs and claims each: one lease timer per run, due one second after its claim. */
  async function claimedRuns(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const started = await agent.ok("start_run", { process: "lease-probe", inputs: {} });
      ids.push(started.run.id);
      await agent.ok("claim", { runId: started.run.id, stepId: "work" });
    }
    return ids;
  }

  /** Waits (with a deadline) until every run's timer has fired, then returns the tick counts. */
  async function allFired(ids: string[], timeoutMs = 60_000): Promise<Map<string, number>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const counts = await tickCounts(baton.databaseUrl, ids);
      const left = await timersOf(baton.databaseUrl, ids);
      if ([...counts.values()].every((c) => c >= 1) && left.length === 0) return counts;
      if (Date.now() > deadline)
        throw new Error(
          `not every timer fired: ${JSON.stringify([...counts])}, left ${JSON.stringify(left)}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function expectOneTickEach(ids: string[]) {
    const counts = await allFired(ids);
    expect([...counts.values()]).toEqual(ids.map(() => 1));
    const journal = await journalOf(baton.databaseUrl, ids);
    for (const id of ids)
      expect(journal.filter((r) => r.runId === id).map((r) => r.command)).toEqual([
        "start_run",
        "claim",
        "tick",
      ]);
    // Each lease ended exactly as §3.3 says: the step is claimable again at once.
    const view = await agent.ok("get_run", { runId: ids[0] });
    expect(view.steps[0]).toMatchObject({ id: "work", state: "ready" });
  }

  /** Waits (with a deadline) until the deployment's log has a line matching every pattern. */
  async function logged(patterns: RegExp[], timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = readFileSync(join(baton.dataDir, "test.log"), "utf8");
      if (patterns.every((p) => p.test(text))) return text;
      if (Date.now() > deadline) throw new Error(`the log never matched ${patterns.join(", ")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it("40 timers coming due while two scheduler replicas race for them one at a time: each fires exactly once (issue #5 exactly once)", async () => {
    // Both replicas poll before the first timer is due, and take one row per round, so they contend
    // for every timer.
    const race = { BATON_SCHEDULER_BATCH: "1", BATON_LOG_LEVEL: "info" };
    const replicas = [
      baton.serve("scheduler", { ...race, BATON_REPLICA_ID: "race-a" }),
      baton.serve("scheduler", { ...race, BATON_REPLICA_ID: "race-b" }),
    ];
    try {
      await logged([
        /"replica":"race-a"[^\n]*scheduler started/,
        /"replica":"race-b"[^\n]*scheduler started/,
      ]);
      const ids = await claimedRuns(40);
      await expectOneTickEach(ids);
    } finally {
      for (const r of replicas) r.kill("SIGTERM");
      await Promise.all(replicas.map((r) => exited(r, 15_000)));
    }
  });

  it("a scheduler SIGKILLed right after taking timers: after a restart each fires once, not twice, not never (issue #5 kill -9)", async () => {
    const ids = await claimedRuns(10);
    const doomed = baton.serve("scheduler", {
      BATON_REPLICA_ID: "doomed-take",
      BATON_SCHEDULER_FAULT: "kill-after-take",
    });
    expect(await exited(doomed, 60_000)).toBe("SIGKILL");
    // It took timers and died before delivering any: claimed, none fired.
    const held = await timersOf(baton.databaseUrl, ids);
    expect(held.length).toBe(ids.length);
    expect(held.filter((t) => t.claimToken?.startsWith("doomed-take/")).length).toBeGreaterThan(0);
    expect([...(await tickCounts(baton.databaseUrl, ids)).values()]).toEqual(ids.map(() => 0));

    const restarted = baton.serve("scheduler", { BATON_REPLICA_ID: "restarted-take" });
    try {
      await expectOneTickEach(ids);
    } finally {
      restarted.kill("SIGTERM");
      await exited(restarted, 15_000);
    }
  });

  it("a scheduler SIGKILLed right after sending ticks, before any commit was confirmed: after a restart each fires once (issue #5 kill -9)", async () => {
    const ids = await claimedRuns(10);
    const doomed = baton.serve("scheduler", {
      BATON_REPLICA_ID: "doomed-send",
      BATON_SCHEDULER_FAULT: "kill-after-send",
      BATON_SCHEDULER_CONCURRENCY: "4",
    });
    expect(await exited(doomed, 60_000)).toBe("SIGKILL");
    // The engine may have committed what was sent; no run fired twice either way.
    for (const c of (await tickCounts(baton.databaseUrl, ids)).values()) expect(c).toBeLessThanOrEqual(1);

    const restarted = baton.serve("scheduler", { BATON_REPLICA_ID: "restarted-send" });
    try {
      await expectOneTickEach(ids);
    } finally {
      restarted.kill("SIGTERM");
      await exited(restarted, 15_000);
    }
  });
});
