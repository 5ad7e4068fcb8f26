import { NatsClock } from "@baton/clock/nats";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrivateNats, recordUnsafeRequests } from "../../../test/support/nats-server.ts";
import { eventsStream, NatsBus } from "../src/index.ts";

/**
 * Issue #8, part 4: JetStream losing a stream or KV bucket is a blip that the bus recovers from by
 * itself, however often it happens and at whatever moment. The shared manual clock's bucket and the
 * events stream are deleted over and over, each time right after a service made it again, while
 * services read the clock, move it and publish events: nothing they send may end nats-server (2.9
 * panics on `STREAM.MSG.GET` and on a stream info with a subjects filter that reach a stream being
 * made), the clock never goes backwards, and afterwards it moves and events reach the stream.
 */

const NAMESPACE = "recreate";
const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a lost stream or bucket, again and again, while services use it (issue #8, part 4)", () => {
  let nats: PrivateNats;
  let nc: NatsConnection;
  const buses: NatsBus[] = [];
  const clocks: NatsClock[] = [];
  const unsafe: string[][] = [];

  beforeAll(async () => {
    nats = await PrivateNats.start();
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    for (let i = 0; i < 2; i++) {
      const bus = await NatsBus.connect(nats.url, `service-${i}`, NAMESPACE);
      unsafe.push(recordUnsafeRequests(bus.connection));
      buses.push(bus);
      clocks.push(await NatsClock.open(bus, { resyncMs: 50 }));
    }
  });

  afterAll(async () => {
    for (const clock of clocks) clock.close();
    for (const bus of buses) await bus.close().catch(() => undefined);
    await nc?.close().catch(() => undefined);
    await nats?.stop();
  });

  /** Deletes `stream` `times` times, each time as soon as it exists again (within `withinMs`). */
  async function deleteOnceMade(stream: string, times: number, withinMs: number): Promise<void> {
    const jsm = await nc.jetstreamManager();
    for (let i = 0; i < times; i++) {
      const deadline = Date.now() + 60_000;
      while (!(await jsm.streams.info(stream).catch(() => null))) {
        if (Date.now() > deadline)
          throw new Error(`${stream} was not made again; ${JSON.stringify(nats.report())}`);
        await sleep(10);
      }
      await sleep(Math.random() * withinMs);
      await jsm.streams.delete(stream).catch(() => false);
    }
  }

  it("the clock bucket and the events stream deleted over and over while services read, move and publish: nats-server never exits, the clock never goes back, and all of it works after", async () => {
    let busy = true;
    const seen = clocks.map((c) => c.now());
    const backwards: string[] = [];
    const load = async (i: number) => {
      const clock = clocks[i] as NatsClock;
      const bus = buses[i] as NatsBus;
      while (busy) {
        const now = await clock.sync();
        if (now < (seen[i] as number)) backwards.push(`clock ${i}: ${now} after ${seen[i]}`);
        seen[i] = Math.max(seen[i] as number, now);
        if (i === 0) await clock.advance(1_000).catch(() => undefined);
        await bus.publish("events.recreate", { i }).catch(() => undefined);
        await sleep(5);
      }
    };
    const loads = [load(0), load(1)];
    try {
      await Promise.all([
        deleteOnceMade(`KV_${NatsClock.bucket(NAMESPACE)}`, 8, 50),
        deleteOnceMade(eventsStream(NAMESPACE), 8, 50),
      ]);
    } finally {
      busy = false;
      await Promise.all(loads);
    }
    expect(backwards).toEqual([]);
    expect(unsafe.flat()).toEqual([]);
    expect(nats.report().unexpectedExits, nats.report().log).toEqual([]);

    // Afterwards: a move reaches every service, and events reach the stream.
    const move = await (clocks[0] as NatsClock).advance(HOUR);
    expect(move.from).toBeGreaterThanOrEqual(Math.max(...seen));
    const deadline = Date.now() + 30_000;
    while ((await (clocks[1] as NatsClock).sync()) < move.to) {
      if (Date.now() > deadline) throw new Error(`clock 1 never reached ${move.to}`);
      await sleep(50);
    }
    await (buses[1] as NatsBus).publish("events.recreate", { after: true });
    const jsm = await nc.jetstreamManager();
    expect((await jsm.streams.info(eventsStream(NAMESPACE))).state.messages).toBeGreaterThan(0);
  });
});
