import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, HOUR, processFolder, TestClock } from "../support/clock.ts";
import { type Deployment, REPO, startDistributed, startEmbedded } from "../support/deploy.ts";
import type { McpSession } from "../support/mcp.ts";
import { stepOf } from "../support/walk.ts";

/**
 * Issue #5 "A clock you can move": `baton clock advance <duration>` against `baton dev --clock
 * manual` returns once every timer that fell due has been applied (cascades included); the admin call
 * is refused unless the clock is manual and unless the caller is an operator; the manual clock
 * survives a restart on the same data directory without going backwards; on NATS a service started
 * later joins the shared clock where it stands.
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

  it("baton clock advance 3d returns once both waits of a cascade are applied, and prints the new time (issue #5)", async () => {
    const before = await (await TestClock.of(dev)).now();
    const now = await baton(["clock", "now", "--url", base(dev), "--data-dir", dataDir]);
    expect(now).toMatchObject({ code: 0, stdout: `${new Date(before).toISOString()} manual\n` });

    const started = await agent.ok("start_run", { process: "cascade", inputs: {} });
    const runId = started.run.id as string;
    const advanced = await baton(["clock", "advance", "3d", "--url", base(dev), "--data-dir", dataDir]);
    expect(advanced).toMatchObject({ code: 0, stdout: `${new Date(before + 3 * DAY).toISOString()}\n` });
    // No waiting: the command returned after the cascade.
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

  it("the manual clock survives a restart on the same data directory: time does not go backwards, and waits still fire (issue #5)", async () => {
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
    const view = await agent.ok("get_run", { runId: started.run.id });
    expect(view.data.steps.second).toMatchObject({ at: new Date(reached + 3 * DAY).toISOString() });
    expect(stepOf(view, "work").state).toBe("ready");
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
  it("a scheduler started after the clock moved joins it where it stands; the clock outlives every scheduler (issue #5)", async () => {
    const d = await startDistributed({ clock: "manual", schedulers: 0 });
    try {
      const first = d.serve("scheduler", { BATON_REPLICA_ID: "clock-a" });
      const clock = await TestClock.of(d);
      await untilAnswered(() => clock.now());
      const reached = await clock.advance(2 * DAY);
      first.kill("SIGTERM");
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the scheduler did not stop within 15 s")), 15_000);
        first.once("exit", () => resolve(clearTimeout(timer)));
      });
      d.serve("scheduler", { BATON_REPLICA_ID: "clock-b" });
      expect(await untilAnswered(() => clock.now())).toBe(reached);
      expect(await clock.advance(HOUR)).toBe(reached + HOUR);
    } finally {
      await d.stop();
    }
  });
});
