import { type EngineWrite, envelope, InProcessBus } from "@baton/bus";
import { ManualClock } from "@baton/clock";
import { type Database, openEmbedded } from "@baton/db";
import { silentLogger } from "@baton/kit";
import type { Identity } from "@baton/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineService } from "../../services/engine/src/index.ts";
import { createScheduler, type SchedulerService } from "../../services/scheduler/src/index.ts";
import { HOUR, iso, MINUTE } from "../support/clock.ts";
import { OPERATOR as operator, publishProcess, testEngine } from "../support/in-process.ts";

/**
 * Issue #5 "wait_for … racing correctly with send_event" (checklist #83), at the one moment MCP
 * cannot reach: an event that arrives after the time-out's fire time but before the scheduler has
 * delivered it, and the other orders. The engine, registry and scheduler run in this process over
 * embedded PostgreSQL and the in-process bus, on a manual clock set directly, so the scheduler runs
 * only when the test says. The outcome follows time, not delivery order: whichever happened first
 * (the event, or the time-out at its own fire time) wins, and a time-out at the very instant the
 * event arrives has already happened.
 */

const PROCESS = `---
name: ping-or-timeout
description: Waits up to an hour for a ping.
steps:
  - id: ping
    wait_for: ping
    timeout: 1h
    on_timeout: timed_out
    next: pinged
  - id: pinged
    agent: The ping came.
    next: done
  - id: timed_out
    agent: No ping came.
    next: done
  - id: done
    finish: ok
---

# Ping or time-out
`;

const T0 = Date.parse("2026-10-06T09:00:00Z");
const sender: Identity = { org: "default", kind: "agent", id: "a_sender", groups: [], operator: false };

describe("wait_for time-out racing send_event (in process, manual clock)", () => {
  let database: Database;
  let bus: InProcessBus;
  let clock: ManualClock;
  let engine: EngineService;
  let scheduler: SchedulerService;
  let runs = 0;

  beforeAll(async () => {
    database = await openEmbedded("memory://");
    bus = new InProcessBus();
    clock = new ManualClock(T0);
    engine = testEngine({ db: database.db, bus, clock });
    // Not started: no loop runs; the test calls settle() when the scheduler gets round to it.
    scheduler = createScheduler({
      db: database.db,
      bus,
      clock,
      mover: null,
      log: silentLogger,
      settings: {
        replicaId: "race",
        clockOrg: "default",
        pollMs: 1_000,
        holdMs: 30_000,
        backoffMs: 1_000,
        partitions: 4,
        batch: 100,
        concurrency: 4,
        tickTimeoutMs: 20_000,
      },
    });
    await engine.start();
    const published = await publishProcess({ db: database.db, bus, clock }, "ping-or-timeout", PROCESS);
    if (!published.ok) throw new Error(JSON.stringify(published.error));
  });

  afterAll(async () => {
    await engine?.stop();
    await bus?.close();
    await database?.close();
  });

  // biome-ignore lint/suspicious/noExplicitAny: tests read response shapes dynamically
  async function write(who: Identity, payload: EngineWrite): Promise<any> {
    const result = (await engine.write(envelope("test", who, payload, Date.now() + 30_000))) as {
      ok: boolean;
      data?: unknown;
      error?: unknown;
    };
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    return result.data;
  }

  async function startRun(): Promise<{ runId: string; at: number }> {
    const runId = `r_race${++runs}`;
    const at = clock.now();
    await write(operator, {
      tool: "start_run",
      runId,
      args: { process: "ping-or-timeout", inputs: {}, requestId: `start-${runId}` },
    });
    return { runId, at };
  }

  const ping = (runId: string) =>
    write(sender, {
      tool: "send_event",
      runId,
      args: { runId, name: "ping", data: { n: 1 }, requestId: `ping-${runId}-${clock.now()}` },
    });

  // biome-ignore lint/suspicious/noExplicitAny: tests read response shapes dynamically
  async function view(runId: string): Promise<any> {
    const result = (await engine.read(
      envelope("test", operator, { tool: "get_run", args: { runId } }, Date.now() + 30_000),
    )) as { data: unknown };
    return result.data;
  }

  const settle = () => scheduler.settle(clock.now(), Date.now() + 30_000);

  it("an event after the time-out's fire time, before the scheduler delivered it, is held: the time-out came first (checklist #83)", async () => {
    const { runId, at } = await startRun();
    clock.set(at + HOUR + MINUTE);
    expect(await ping(runId)).toEqual({ consumedBy: null });
    const v = await view(runId);
    expect(v.data.steps.ping).toEqual({ by: "server", at: iso(at + HOUR), history: [] });
    expect(v.steps.find((s: { id: string }) => s.id === "timed_out").state).toBe("ready");
    // The send_event's own transition applied the time-out; the scheduler finds nothing left.
    expect(await settle()).toEqual({ ticks: 0, pending: 0 });
  });

  it("an event at the time-out's very instant is held too: the wait had ended (checklist #83)", async () => {
    const { runId, at } = await startRun();
    clock.set(at + HOUR);
    expect(await ping(runId)).toEqual({ consumedBy: null });
    expect((await view(runId)).data.steps.ping).toMatchObject({ by: "server", at: iso(at + HOUR) });
  });

  it("an event before the fire time wins, and the scheduler delivering later changes nothing (checklist #83)", async () => {
    const { runId, at } = await startRun();
    clock.set(at + HOUR - 1);
    expect(await ping(runId)).toEqual({ consumedBy: "ping" });
    clock.set(at + 2 * HOUR);
    expect(await settle()).toEqual({ ticks: 0, pending: 0 });
    const v = await view(runId);
    expect(v.data.steps.ping).toMatchObject({ output: { n: 1 }, by: "a_sender" });
    expect(v.steps.find((s: { id: string }) => s.id === "pinged").state).toBe("ready");
    expect(v.steps.find((s: { id: string }) => s.id === "timed_out").state).toBeNull();
  });

  it("the scheduler applies the time-out at its own fire time; an event after it is held (checklist #83)", async () => {
    const { runId, at } = await startRun();
    clock.set(at + 3 * HOUR);
    expect(await settle()).toEqual({ ticks: 1, pending: 0 });
    expect((await view(runId)).data.steps.ping).toEqual({ by: "server", at: iso(at + HOUR), history: [] });
    expect(await ping(runId)).toEqual({ consumedBy: null });
    expect(await settle()).toEqual({ ticks: 0, pending: 0 });
  });
});
