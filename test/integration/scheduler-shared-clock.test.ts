import { randomBytes } from "node:crypto";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { envelope, eventsStream, NatsBus, type SchedulerCall } from "@baton/bus";
import { NatsClock } from "@baton/clock/nats";
import { type Database, openEmbedded, runJournal } from "@baton/db";
import { silentLogger } from "@baton/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScheduler } from "../../services/scheduler/src/index.ts";
import { HOUR } from "../support/clock.ts";
import { NATS_URL } from "../support/deploy.ts";
import { OPERATOR as operator, publishProcess, testEngine } from "../support/in-process.ts";
import { until } from "../support/processes.ts";

/**
 * Issue #5 review finding #1: every service follows the shared manual clock (`BATON_CLOCK=manual`,
 * NATS KV) reliably, even one that missed a clock-move message, and the scheduler's `advance` is
 * not done while the engine is behind. Real NATS; a service's connection goes through a small TCP
 * relay the test cuts, so the move's announcement is lost exactly as in a network blip.
 */

/** A TCP relay to NATS whose connections the test can cut (and refuse) for a while. */
class Relay {
  private readonly sockets = new Set<Socket>();
  private refusing = false;
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async open(target: string): Promise<Relay> {
    const { hostname, port } = new URL(target);
    let relay: Relay | null = null;
    const server = createServer((client) => {
      if (!relay || relay.refusing) return void client.destroy();
      const upstream = createConnection({ host: hostname, port: Number(port) });
      for (const s of [client, upstream]) {
        relay.sockets.add(s);
        s.on("close", () => relay?.sockets.delete(s));
        s.on("error", () => s.destroy());
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const local = typeof address === "object" && address ? address.port : 0;
    relay = new Relay(server, `nats://127.0.0.1:${local}`);
    return relay;
  }

  /** Drops every connection and refuses new ones until {@link restore}. */
  cut(): void {
    this.refusing = true;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Resolves once `bus`'s connection has reported `type` (e.g. `disconnect`, `reconnect`); deadline 15 s. */
function status(bus: NatsBus, type: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${type} within 15 s`)), 15_000);
    void (async () => {
      for await (const s of bus.connection.status()) {
        if (s.type === type) {
          clearTimeout(timer);
          return resolve();
        }
      }
    })();
  });
}

const WAIT = `---
name: one-wait
description: One wait, then an agent step.
steps:
  - id: pause
    wait: 1h
  - id: work
    agent: Carry on.
  - id: done
    finish: ok
---

# One wait
`;

describe("shared manual clock on NATS (review of issue #5)", () => {
  const namespace = `tclk${randomBytes(4).toString("hex")}`;
  let relay: Relay;
  const buses: NatsBus[] = [];
  const clocks: NatsClock[] = [];

  async function bus(url: string, name: string): Promise<NatsBus> {
    const b = await NatsBus.connect(url, name, namespace);
    buses.push(b);
    return b;
  }

  async function clockOn(b: NatsBus): Promise<NatsClock> {
    const c = await NatsClock.open(b);
    clocks.push(c);
    return c;
  }

  beforeAll(async () => {
    relay = await Relay.open(NATS_URL);
  });

  afterAll(async () => {
    for (const c of clocks) c.close();
    const cleanup = buses[0];
    if (cleanup) {
      const jsm = await cleanup.connection.jetstreamManager();
      for (const name of [eventsStream(namespace), `KV_${NatsClock.bucket(namespace)}`])
        await jsm.streams.delete(name).catch(() => false);
    }
    for (const b of buses) await b.close();
    await relay?.close();
  });

  it("review #1: a service cut off while the clock moved (its announcement lost) catches up with the stored time once it is back", async () => {
    const mover = await clockOn(await bus(NATS_URL, "test-mover"));
    const behindBus = await bus(relay.url, "test-behind");
    const behind = await clockOn(behindBus);
    expect(behind.now()).toBe(mover.now());

    const disconnected = status(behindBus, "disconnect");
    relay.cut();
    await disconnected;
    await mover.advance(HOUR);
    const moved = mover.now();
    const reconnected = status(behindBus, "reconnect");
    relay.restore();
    await reconnected;
    // Before the fix nothing ever told it: it stayed an hour behind for good.
    expect(behind.now()).toBe(moved - HOUR);
    await until(() => behind.now() === moved, "the cut-off service follows the clock", 15_000, 25);
  });

  it("review #1: the scheduler's advance is not done while the engine's clock is behind — the engine reads the time afresh for a tick", async () => {
    const database: Database = await openEmbedded("memory://");
    try {
      const schedulerBus = await bus(NATS_URL, "test-scheduler");
      const engineBus = await bus(NATS_URL, "test-engine");
      // The engine's clock follows through its own connection, which the relay cuts.
      const engineClockBus = await bus(relay.url, "test-engine-clock");
      const mover = await clockOn(schedulerBus);
      const engineClock = await clockOn(engineClockBus);
      expect(
        (await publishProcess({ db: database.db, bus: engineBus, clock: engineClock }, "one-wait", WAIT)).ok,
      ).toBe(true);
      const engine = testEngine({ db: database.db, bus: engineBus, clock: engineClock });
      await engine.start();
      const scheduler = createScheduler({
        db: database.db,
        bus: schedulerBus,
        clock: mover,
        mover,
        log: silentLogger,
        settings: {
          replicaId: "shared-clock",
          clockOrg: "default",
          pollMs: 60_000,
          holdMs: 30_000,
          backoffMs: 200,
          batch: 100,
          concurrency: 4,
          tickTimeoutMs: 5_000,
          partitions: 4,
        },
      });
      const started = (await engine.write(
        envelope(
          "test",
          operator,
          {
            tool: "start_run",
            runId: "r_behind",
            args: { process: "one-wait", inputs: {}, requestId: "start-behind" },
          },
          Date.now() + 10_000,
        ),
      )) as { ok: boolean };
      expect(started.ok).toBe(true);
      const t = engineClock.now();

      // The engine's clock connection drops while the clock moves: it misses the announcement. It is
      // back a moment later, but nothing has told it the time changed when the tick arrives.
      const disconnected = status(engineClockBus, "disconnect");
      relay.cut();
      await disconnected;
      setTimeout(() => relay.restore(), 200);
      const advanced = await scheduler.handle(
        envelope(
          "scheduler.advance",
          operator,
          { op: "advance", ms: HOUR, requestId: "behind-1" } satisfies SchedulerCall,
          Date.now() + 12_000,
        ),
      );
      // Before the fix the engine ticked at its stale time, changed nothing, and the advance ran out
      // its deadline with the wait still pending.
      expect(advanced).toMatchObject({ ok: true, data: { pending: 0, applied: 1 } });
      const journal = (await database.db.select().from(runJournal)).filter((r) => r.runId === "r_behind");
      expect(journal.map((r) => r.command)).toEqual(["start_run", "tick"]);
      expect(journal.flatMap((r) => (r.detail as { timers: unknown[] }).timers)).toEqual([
        { kind: "wait", stepId: "pause", at: new Date(t + HOUR).toISOString() },
      ]);
      await scheduler.stop();
      await engine.stop();
    } finally {
      await database.close();
    }
  });
});
