import {
  type Bus,
  type EngineWrite,
  envelope,
  InProcessBus,
  type SchedulerCall,
  SUBJECTS,
  type Subscription,
} from "@baton/bus";
import { type Clock, ManualClock } from "@baton/clock";
import { type Database, openEmbedded, runJournal, timers } from "@baton/db";
import { silentLogger } from "@baton/kit";
import { partitionOf } from "@baton/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { EngineService } from "../../services/engine/src/index.ts";
import {
  createScheduler,
  openManualClock,
  type SchedulerSettings,
} from "../../services/scheduler/src/index.ts";
import { DAY, HOUR, iso } from "../support/clock.ts";
import { OPERATOR as operator, publishProcess, testEngine } from "../support/in-process.ts";
import { until } from "../support/processes.ts";

/**
 * Issue #5 review findings on the scheduler's delivery, in one process over embedded PostgreSQL and
 * the in-process bus, with clocks the test sets directly:
 * #2 no spin when the engine answers "unchanged", and `settle` keeps its deadline inside a pass;
 * #3 an advance is idempotent and answers within its caller's deadline with `pending`;
 * #6 a tick goes to the partition of the scheduler's configured P, not the stored column;
 * #7 the advance reply reports timers applied, counted from the journal.
 */

const WAITS = `---
name: waits
description: Two waits in a row, then an agent step.
steps:
  - id: first
    wait: 1h
  - id: second
    wait: 2h
  - id: work
    agent: Carry on.
  - id: done
    finish: ok
---

# Waits
`;

const T0 = Date.parse("2026-10-06T09:00:00Z");

/** Rejects when `promise` has not settled within `ms` (so a test fails rather than hangs). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not return within ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** One embedded database with the `waits` process published, and engines over it. */
async function world() {
  const database = await openEmbedded("memory://");
  const bus = new InProcessBus();
  const published = await publishProcess(
    { db: database.db, bus, clock: new ManualClock(T0) },
    "waits",
    WAITS,
  );
  if (!published.ok) throw new Error(JSON.stringify(published.error));
  return {
    database,
    bus,
    engine(clock: Clock, partitions: number): EngineService {
      return testEngine({ db: database.db, bus, clock, partitions });
    },
  };
}

const SETTINGS: SchedulerSettings = {
  replicaId: "delivery",
  pollMs: 50,
  holdMs: 30_000,
  backoffMs: 1_000,
  batch: 1,
  concurrency: 4,
  tickTimeoutMs: 10_000,
  partitions: 4,
  clockOrg: "default",
};

async function startRun(engine: EngineService, runId: string): Promise<void> {
  const write: EngineWrite = {
    tool: "start_run",
    runId,
    args: { process: "waits", inputs: {}, requestId: `start-${runId}` },
  };
  const result = (await engine.write(envelope("test", operator, write, Date.now() + 10_000))) as {
    ok: boolean;
    error?: unknown;
  };
  if (!result.ok) throw new Error(JSON.stringify(result.error));
}

/** The timers each journal entry of `runId` applied (`detail.timers`), in order. */
async function fired(
  database: Database,
  runId: string,
): Promise<{ kind: string; stepId: string; at: string }[]> {
  const rows = await database.db.select().from(runJournal);
  return rows
    .filter((r) => r.runId === runId)
    .sort((a, b) => a.rev - b.rev)
    .flatMap((r) => (r.detail as { timers?: { kind: string; stepId: string; at: string }[] }).timers ?? []);
}

/**
 * Serves every engine partition with `engine`, counting the ticks it receives. Past `limit` ticks it
 * refuses them: a scheduler spinning over in-process PostgreSQL and bus never yields to a timer, so
 * without this guard it would hang the test instead of failing it.
 */
function countingEngine(bus: Bus, engine: EngineService, partitions: number, limit = 20) {
  const counter = { ticks: 0, subs: [] as Subscription[] };
  for (let p = 0; p < partitions; p++)
    counter.subs.push(
      bus.serve(SUBJECTS.engineWrite(p), async (env) => {
        if ((env.payload as EngineWrite).tool === "tick" && ++counter.ticks > limit)
          throw new Error(`${counter.ticks} ticks: the scheduler is spinning`);
        return engine.write(env as never);
      }),
    );
  return counter;
}

describe("scheduler delivery (in process, review of issue #5)", () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function setUp() {
    const w = await world();
    cleanup.push(async () => {
      await w.bus.close();
      await w.database.close();
    });
    return w;
  }

  it("review #2: a row the engine answers 'unchanged' for is not taken again at once — settle keeps its deadline inside a pass, and the loop does not spin", async () => {
    const w = await setUp();
    const engineClock = new ManualClock(T0);
    // The scheduler's clock runs two hours ahead of the engine's: the 1h wait looks due to it only.
    const ahead = new ManualClock(T0 + 2 * HOUR);
    const engine = w.engine(engineClock, 4);
    const counter = countingEngine(w.bus, engine, 4);
    await startRun(engine, "r_spin");
    const scheduler = createScheduler({
      db: w.database.db,
      bus: w.bus,
      clock: ahead,
      mover: null,
      log: silentLogger,
      settings: SETTINGS,
    });

    // One take, one "unchanged" tick, then the row rests for the back-off: settle returns by its
    // deadline (before the fix a pass of batch 1 re-took the row forever and never returned).
    const started = Date.now();
    const settled = await within(scheduler.settle(ahead.now(), started + 300), 5_000, "settle");
    expect(counter.ticks).toBe(1);
    expect(settled).toMatchObject({ pending: 1 });

    // The loop: over a second and a half it ticks the run at most once per back-off (1 s), not
    // thousands of times.
    await scheduler.start();
    cleanup.push(() => scheduler.stop());
    await new Promise((r) => setTimeout(r, 1_500));
    expect(counter.ticks).toBeLessThanOrEqual(4);

    // Once the engine's clock gets there, the back-off ends and the wait fires, once.
    engineClock.set(T0 + 2 * HOUR);
    await until(
      async () => (await fired(w.database, "r_spin")).length > 0,
      "the first wait fired",
      10_000,
      25,
    );
    expect(await fired(w.database, "r_spin")).toEqual([
      { kind: "wait", stepId: "first", at: iso(T0 + HOUR) },
    ]);
    for (const s of counter.subs) await s.stop();
  });

  it("review #6: after BATON_PARTITIONS changes, a timer written under the old P is delivered to its partition under the new P", async () => {
    const w = await setUp();
    const clock = new ManualClock(T0);
    // A run whose partition under P=8 is one a P=4 deployment does not have.
    let runId = "";
    for (let i = 0; partitionOf(runId, 8) < 4; i++) runId = `r_moved${i}`;
    await startRun(w.engine(clock, 8), runId);
    const stored = (await w.database.db.select().from(timers)).filter((t) => t.runId === runId);
    expect(stored.map((t) => t.partition)).toEqual([partitionOf(runId, 8)]);

    // The deployment restarts with P=4: engine and scheduler alike.
    const engine = w.engine(clock, 4);
    await engine.start();
    cleanup.push(() => engine.stop());
    const scheduler = createScheduler({
      db: w.database.db,
      bus: w.bus,
      clock,
      mover: null,
      log: silentLogger,
      settings: { ...SETTINGS, batch: 100, tickTimeoutMs: 10_000, partitions: 4 },
    });
    clock.set(T0 + HOUR);
    expect(await scheduler.settle(clock.now(), Date.now() + 30_000)).toEqual({ ticks: 1, pending: 0 });
    expect(await fired(w.database, runId)).toEqual([{ kind: "wait", stepId: "first", at: iso(T0 + HOUR) }]);
  });

  it("review #3: an advance answers within its caller's deadline with pending > 0 when the engine cannot be reached, and the same advance again never moves the clock twice; review #7: it reports the timers applied, from the journal", async () => {
    const w = await setUp();
    const { clock, mover } = await openManualClock(w.database.db);
    const t = clock.now();
    const engine = w.engine(clock, 4);
    await startRun(engine, "r_retry");
    const scheduler = createScheduler({
      db: w.database.db,
      bus: w.bus,
      clock,
      mover,
      log: silentLogger,
      settings: { ...SETTINGS, batch: 100, tickTimeoutMs: 10_000 },
    });
    const advance = (payload: SchedulerCall, deadlineMs: number) => {
      const env = envelope("scheduler.advance", operator, payload, Date.now() + deadlineMs);
      return within(scheduler.handle(env), deadlineMs + 2_000, "advance").then((r) => ({
        reply: r,
        inTime: Date.now() <= env.deadline,
      }));
    };

    // No engine serves the partition (a hand-over, a restart): the tick cannot be delivered. The
    // reply still comes within the call's deadline, saying what is left (before the fix it waited
    // the whole tick timeout, and the gateway answered `retry` after the clock had moved).
    const first = await advance({ op: "advance", ms: 3 * HOUR, requestId: "adv-1" }, 2_000);
    expect(first.inTime).toBe(true);
    expect(first.reply).toEqual({
      ok: true,
      data: { now: iso(t + 3 * HOUR), from: iso(t), manual: true, applied: 0, pending: 1 },
    });
    // The same advance again moves nothing.
    const again = await advance({ op: "advance", ms: 3 * HOUR, requestId: "adv-1" }, 2_000);
    expect(again.reply).toMatchObject({ ok: true, data: { now: iso(t + 3 * HOUR), pending: 1 } });
    expect(clock.now()).toBe(t + 3 * HOUR);

    // The engine is back: the same advance carries on to the same target; both waits of the cascade
    // count as applied, though one tick applied them (the old `transitions` figure said 1).
    await engine.start();
    cleanup.push(() => engine.stop());
    const done = await advance({ op: "advance", ms: 3 * HOUR, requestId: "adv-1" }, 10_000);
    expect(done.reply).toEqual({
      ok: true,
      data: { now: iso(t + 3 * HOUR), from: iso(t), manual: true, applied: 2, pending: 0 },
    });
    expect(clock.now()).toBe(t + 3 * HOUR);
    expect(await fired(w.database, "r_retry")).toEqual([
      { kind: "wait", stepId: "first", at: iso(t + HOUR) },
      { kind: "wait", stepId: "second", at: iso(t + 3 * HOUR) },
    ]);

    // The id with another step is a conflict; a new id moves the clock again.
    const conflict = await advance({ op: "advance", ms: HOUR, requestId: "adv-1" }, 5_000);
    expect(conflict.reply).toMatchObject({ ok: false, error: { code: "conflict" } });
    const next = await advance({ op: "advance", ms: DAY, requestId: "adv-2" }, 5_000);
    expect(next.reply).toMatchObject({
      ok: true,
      data: { now: iso(t + 3 * HOUR + DAY), applied: 0, pending: 0 },
    });
    const bad = await advance({ op: "advance", ms: HOUR, requestId: 7 as unknown as string }, 5_000);
    expect(bad.reply).toMatchObject({ ok: false, error: { code: "invalid" } });
  });
});
