import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpSession } from "@baton/conformance/mcp";
import { agentItem, stepOf } from "@baton/conformance/walk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceClock } from "../../services/cli/src/clock.ts";
import { DAY, HOUR, processFolder, TestClock } from "../support/clock.ts";
import {
  type Deployment,
  type DistributedDeployment,
  REPO,
  startDistributed,
  startEmbedded,
} from "../support/deploy.ts";
import { journalOf, withDb } from "../support/journal.ts";

/**
 * Issue #5 "A clock you can move": `baton clock advance <duration>` against `baton dev --clock
 * manual` returns once every timer that fell due has been applied (cascades included); the admin call
 * is refused unless the clock is manual and unless the caller is an operator; the manual clock
 * survives a restart on the same data directory without going backwards (nor behind the run data a
 * real-time session left); on NATS a service started later joins the shared clock where it stands,
 * and an advance the engine cannot finish yet is retried without moving the clock twice.
 *
 * What proves a timer fired is what only a committed transition changes: `get_work` listing the next
 * agent step (the ready-steps index is written by the commit), and on PostgreSQL the journal's tick
 * rows with their `detail.timers`. `get_run` alone proves nothing here: it applies due timers to the
 * view on the fly, so it looks right even if the scheduler delivered nothing.
 */

const CASCADE = `
description: Two waits in a row, then an agent step.
steps:
  - id: first
    wait: 1d
  - id: second
    wait: 2d
  - id: work
    agent: Carry on.
  - id: done
    finish: ok
`;

/** Runs `baton <args>` to completion (deadline 60 s) and returns its exit code and output. */
function baton(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      join(REPO, "node_modules/.bin/tsx"),
      [join(REPO, "services/cli/src/main.ts"), ...args],
      {
        cwd: REPO,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`baton ${args.join(" ")} did not finish within 60 s`));
    }, 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const base = (d: Deployment) => d.url.replace(/\/mcp$/, "");

/** Resolves when a service process has exited; rejects after 15 s. */
function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => reject(new Error("the service did not stop within 15 s")), 15_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** `call()` once a service that is still starting answers it (deadline 60 s). */
async function untilAnswered<T>(call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

describe("baton clock — embedded (baton dev --clock manual)", () => {
  let dataDir: string;
  let dev: Deployment;
  let agent: McpSession;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "baton-clock-"));
    dev = await startEmbedded({ clock: "manual", dataDir });
    await dev.publish(processFolder("cascade", CASCADE));
    agent = await dev.session({ kind: "agent", id: "a_clock" });
  });

  afterAll(async () => {
    await agent?.close();
    await dev?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("baton clock advance 3d returns once both waits of a cascade are applied, and prints the new time (issue #5; review #5a: proven by get_work, which only a committed tick changes)", async () => {
    const before = await (await TestClock.of(dev)).now();
    const now = await baton(["clock", "now", "--url", base(dev), "--data-dir", dataDir]);
    expect(now).toMatchObject({ code: 0, stdout: `${new Date(before).toISOString()} manual\n` });

    const started = await agent.ok("start_run", { process: "cascade", inputs: {} });
    const runId = started.run.id as string;
    expect(await agentItem(agent, runId, "work")).toBeUndefined();
    const advanced = await baton(["clock", "advance", "3d", "--url", base(dev), "--data-dir", dataDir]);
    expect(advanced).toMatchObject({ code: 0, stdout: `${new Date(before + 3 * DAY).toISOString()}\n` });
    // No waiting: the command returned after the cascade was committed, so the agent's inbox lists
    // the step after it (the index get_work reads is written only by the tick's commit).
    expect(await agentItem(agent, runId, "work")).toMatchObject({ runId, stepId: "work" });
    const view = await agent.ok("get_run", { runId });
    expect(view.data.steps.first).toMatchObject({ by: "server", at: new Date(before + DAY).toISOString() });
    expect(view.data.steps.second).toMatchObject({
      by: "server",
      at: new Date(before + 3 * DAY).toISOString(),
    });
    expect(stepOf(view, "work").state).toBe("ready");
  });

  it("baton clock advance refuses what is not a duration of §2.4 (30m, 4h, 3d) with exit code 2", async () => {
    const r = await baton(["clock", "advance", "3w", "--url", base(dev), "--data-dir", dataDir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("3w is not a duration");
    const back = await baton(["clock", "advance", "-1h", "--url", base(dev), "--data-dir", dataDir]);
    expect(back).toMatchObject({
      code: 2,
      stderr: "baton: -1h: the clock only moves forward; use a duration like 30m, 4h or 3d\n",
    });
  });

  it("the CLI names the address when nothing answers there, at once, for clock and publish alike (newcomer review)", async () => {
    const free = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, "127.0.0.1", () => {
        const port = (srv.address() as { port: number }).port;
        srv.close(() => resolve(port));
      });
    });
    const url = `http://127.0.0.1:${free}`;
    const said = `baton: nothing answers at ${url}: start the server (pnpm baton dev), or pass --url with its address\n`;
    for (const args of [
      ["clock", "advance", "1h", "--url", url, "--data-dir", dataDir],
      ["clock", "now", "--url", url, "--data-dir", dataDir],
      ["publish", "fixtures/expense-approval", "--url", url, "--data-dir", dataDir],
    ]) {
      expect(await baton(args)).toMatchObject({ code: 1, stderr: said });
    }
  });

  it("the admin call needs an operator: a person without the role is refused (403)", async () => {
    const token = await dev.token({ kind: "person", id: "pat@example.com" });
    const response = await fetch(`${base(dev)}/api/clock/advance`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ ms: HOUR }),
    });
    expect(response.status).toBe(403);
    const invalid = await fetch(`${base(dev)}/api/clock/advance`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await dev.token({ kind: "person", id: "ops@example.com", operator: true })}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ ms: -5 }),
    });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: string } }).error.code).toBe("invalid");
  });

  it("the clock is one for the whole server: an operator of another organization reads it but may not move it (tenancy review)", async () => {
    const elsewhere = await dev.token({
      kind: "person",
      id: "ops@other.example",
      operator: true,
      org: "other",
    });
    const headers = { authorization: `Bearer ${elsewhere}`, "content-type": "application/json" };
    const before = await (await TestClock.of(dev)).now();
    const moved = await fetch(`${base(dev)}/api/clock/advance`, {
      method: "POST",
      headers,
      body: JSON.stringify({ ms: HOUR, requestId: "other-1" }),
    });
    expect(moved.status).toBe(403);
    expect(await moved.json()).toEqual({
      ok: false,
      error: {
        code: "forbidden",
        message:
          'the clock is shared by every organization on this server; only operators of "default" (BATON_CLOCK_ORG) move it',
      },
    });
    const read = await fetch(`${base(dev)}/api/clock`, { headers });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ ok: true, data: { manual: true } });
    expect(await (await TestClock.of(dev)).now()).toBe(before);
  });

  it("the manual clock survives a restart on the same data directory: time does not go backwards, and waits still fire (issue #5; review #5a: proven by get_work)", async () => {
    const clock = await TestClock.of(dev);
    const reached = await clock.advance(5 * DAY);
    const started = await agent.ok("start_run", { process: "cascade", inputs: {} });
    await agent.close();
    await dev.stop();

    dev = await startEmbedded({ clock: "manual", dataDir });
    agent = await dev.session({ kind: "agent", id: "a_clock" });
    const again = await TestClock.of(dev);
    expect(await again.now()).toBe(reached);
    await again.advance(3 * DAY);
    expect(await agentItem(agent, started.run.id, "work")).toMatchObject({ stepId: "work" });
    const view = await agent.ok("get_run", { runId: started.run.id });
    expect(view.data.steps.second).toMatchObject({ at: new Date(reached + 3 * DAY).toISOString() });
    expect(stepOf(view, "work").state).toBe("ready");
  });
});

describe("baton clock — manual, then real time, then manual on one data directory", () => {
  it("review #8: a manual clock resumes no earlier than the newest run a real-time session left, so it never puts run data in the future", async () => {
    const dir = mkdtempSync(join(tmpdir(), "baton-clock-mix-"));
    let d: Deployment | null = null;
    try {
      d = await startEmbedded({ clock: "manual", dataDir: dir });
      await d.publish(processFolder("cascade", CASCADE));
      const left = await (await TestClock.of(d)).now();
      await d.stop();

      d = await startEmbedded({ dataDir: dir });
      const session = await d.session({ kind: "agent", id: "a_real" });
      const started = await session.ok("start_run", { process: "cascade", inputs: {} });
      await session.close();
      const startedAt = Date.parse(started.run.startedAt);
      expect(startedAt).toBeGreaterThan(left);
      await d.stop();

      d = await startEmbedded({ clock: "manual", dataDir: dir });
      const clock = await TestClock.of(d);
      // Before the fix the clock resumed at `left`, behind the run started in real time.
      expect(await clock.now()).toBeGreaterThanOrEqual(startedAt);
      const agent2 = await d.session({ kind: "agent", id: "a_real" });
      await clock.advance(3 * DAY);
      const view = await agent2.ok("get_run", { runId: started.run.id });
      expect(view.data.steps.second).toMatchObject({ by: "server" });
      expect(Date.parse(view.data.steps.first.at)).toBe(startedAt + DAY);
      expect(await agentItem(agent2, started.run.id, "work")).toMatchObject({ stepId: "work" });
      await agent2.close();
    } finally {
      await d?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("baton clock — real time (the default)", () => {
  let dev: Deployment;

  beforeAll(async () => {
    dev = await startEmbedded();
  });

  afterAll(async () => {
    await dev?.stop();
  });

  it("advancing is refused as a conflict unless the clock is manual; the time is real (issue #5)", async () => {
    // Operators only, checked first: a person without the role learns nothing of the clock's mode.
    const person = await dev.token({ kind: "person", id: "pat@example.com" });
    const refused = await fetch(`${base(dev)}/api/clock/advance`, {
      method: "POST",
      headers: { authorization: `Bearer ${person}`, "content-type": "application/json" },
      body: JSON.stringify({ ms: DAY }),
    });
    expect(refused.status).toBe(403);
    const token = await dev.token({ kind: "person", id: "ops@example.com", operator: true });
    const response = await fetch(`${base(dev)}/api/clock/advance`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ ms: DAY }),
    });
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("conflict");
    const cli = await baton(["clock", "advance", "1d", "--url", base(dev), "--data-dir", dev.dataDir]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain("--clock manual");
    const before = Date.now();
    const now = await (await TestClock.of(dev)).now();
    expect(Math.abs(now - before)).toBeLessThan(HOUR);
  });
});

describe("baton clock — distributed (shared manual clock in NATS KV)", () => {
  let d: DistributedDeployment;

  beforeAll(async () => {
    // A short call deadline on every service, so an advance that cannot finish answers quickly.
    d = await startDistributed({
      clock: "manual",
      schedulers: 0,
      env: { BATON_CALL_TIMEOUT_MS: "4000" },
    });
    await d.publish(processFolder("cascade", CASCADE));
  });

  afterAll(async () => {
    await d?.stop();
  });

  it("a scheduler started after the clock moved joins it where it stands; the clock outlives every scheduler (issue #5)", async () => {
    const first = d.serve("scheduler", { BATON_REPLICA_ID: "clock-a" });
    const clock = await TestClock.of(d);
    await untilAnswered(() => clock.now());
    const reached = await clock.advance(2 * DAY);
    first.kill("SIGTERM");
    await exited(first);
    d.serve("scheduler", { BATON_REPLICA_ID: "clock-b" });
    expect(await untilAnswered(() => clock.now())).toBe(reached);
    expect(await clock.advance(HOUR)).toBe(reached + HOUR);
  });

  it("review #5a, #7: a cascade's two waits fire once each, in committed tick rows of the journal, and the advance reports both as applied", async () => {
    if (d.running("scheduler").length === 0) d.serve("scheduler", { BATON_REPLICA_ID: "clock-c" });
    const clock = await TestClock.of(d);
    await untilAnswered(() => clock.now());
    const agent = await d.session({ kind: "agent", id: "a_cascade" });
    try {
      const started = await agent.ok("start_run", { process: "cascade", inputs: {} });
      const runId = started.run.id as string;
      const t = Date.parse(started.run.startedAt);
      const report = await clock.advanceReport(3 * DAY);
      expect(report).toMatchObject({ from: new Date(t).toISOString(), applied: 2 });
      const journal = await journalOf(d.databaseUrl, [runId]);
      expect(journal.filter((r) => r.command === "tick").flatMap((r) => r.timers)).toEqual([
        { kind: "wait", stepId: "first", at: new Date(t + DAY).toISOString() },
        { kind: "wait", stepId: "second", at: new Date(t + 3 * DAY).toISOString() },
      ]);
      expect(journal.every((r) => r.command === "tick" || r.timers.length === 0)).toBe(true);
      expect(await agentItem(agent, runId, "work")).toMatchObject({ stepId: "work" });
    } finally {
      await agent.close();
    }
  });

  it("review #3: an advance the engine cannot finish in time answers pending rather than retry, the CLI carries on with the same request and gives up clearly, and the clock moves once", async () => {
    // This scheduler waits longer for a tick than the gateway waits for it, and takes one timer per
    // round, so its loop and the advance each deliver one. Before the fix the advance's own slow
    // tick outlasted the gateway's deadline, which answered `retry` after the clock had moved.
    const stopping = d.running("scheduler");
    for (const s of stopping) s.kill("SIGTERM");
    await Promise.all(stopping.map((s) => exited(s)));
    d.serve("scheduler", {
      BATON_REPLICA_ID: "clock-slow",
      BATON_CALL_TIMEOUT_MS: "8000",
      BATON_SCHEDULER_BATCH: "1",
    });
    const clock = await TestClock.of(d);
    await untilAnswered(() => clock.now());
    const agent = await d.session({ kind: "agent", id: "a_retry" });
    try {
      const runs: { id: string; startedAt: number }[] = [];
      for (let i = 0; i < 2; i++) {
        const started = await agent.ok("start_run", { process: "cascade", inputs: {} });
        runs.push({ id: started.run.id, startedAt: Date.parse(started.run.startedAt) });
      }
      const ids = runs.map((r) => r.id);
      const before = await clock.now();
      // The engine is slow: the runs' rows are locked, so their ticks' commits wait.
      await withDb(d.databaseUrl, async (db) => {
        await db.query("begin");
        await db.query("select 1 from runs where id = any($1) for update", [ids]);
        try {
          // The server answers within its 4 s call deadline with timers pending; the CLI sends the
          // same call again until its own limit, then says where the clock stands and how to carry
          // on. Before the fix the first call came back `retry`, and a retry moved the clock again.
          const { baseUrl, token } = clock.api;
          await expect(advanceClock(baseUrl, token, DAY, 5_000)).rejects.toThrow(
            /the clock moved to .* but \d+ timers due by then were still not applied .*baton clock advance 0m/,
          );
          // It asked several times; the clock moved once.
          expect(await clock.now()).toBe(before + DAY);
        } finally {
          await db.query("rollback");
        }
      });

      const { baseUrl, token } = clock.api;
      const carried = await advanceClock(baseUrl, token, 0, 60_000);
      expect(carried.now).toBe(new Date(before + DAY).toISOString());
      expect(await clock.now()).toBe(before + DAY);
      const journal = await journalOf(d.databaseUrl, ids);
      for (const r of runs)
        expect(journal.filter((e) => e.runId === r.id).flatMap((e) => e.timers)).toEqual([
          { kind: "wait", stepId: "first", at: new Date(r.startedAt + DAY).toISOString() },
        ]);
    } finally {
      await agent.close();
    }
  });
});
