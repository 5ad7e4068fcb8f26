import { type Logger, silentLogger } from "@baton/kit";
import { connect, type NatsConnection, RetentionPolicy, StorageType } from "nats";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PrivateNats, recordUnsafeRequests } from "../../../test/support/nats-server.ts";
import { KvPartitionOwnership } from "../src/index.ts";

/**
 * Partition leases through NATS blips (ARCHITECTURE rule 5, issue #8 part 4): a lease round that
 * fails, the first one included, never fails the replica's start and is retried on the next tick;
 * a lost bucket is made again and every partition leased again; and nothing a replica sends while
 * a bucket is being made again can end nats-server. Each case runs real replicas (`KvPartitionOwnership`) on a
 * private `nats-server` of its own, with short rounds; every wait is a deadline with polling.
 */

const PARTITIONS = 8;
const ROUND_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("partition leases recover from any NATS blip by themselves (ARCHITECTURE rule 5, issue #8)", () => {
  let nats: PrivateNats;
  /** The test's own connection, straight to the private NATS. */
  let nc: NatsConnection;
  const replicas: {
    id: string;
    leases: KvPartitionOwnership;
    served: Set<number>;
    nc: NatsConnection;
    unsafe: string[];
  }[] = [];
  let bucketSerial = 0;

  beforeAll(async () => {
    nats = await PrivateNats.start();
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  });

  afterEach(async () => {
    const unsafe = replicas.flatMap((r) => r.unsafe);
    for (const r of replicas.splice(0)) {
      await r.leases.stop().catch(() => undefined);
      await r.nc.close().catch(() => undefined);
    }
    // Never a request that ends nats-server 2.9 when it reaches a bucket being made again, whether
    // or not this run happened to hit that window.
    expect(new Set(unsafe)).toEqual(new Set());
    // Whatever a test sent, the server must not have ended by itself (a crash is a finding).
    const server = nats.report();
    expect(server.unexpectedExits, `nats-server ended by itself; its log:\n${server.log}`).toEqual([]);
  });

  afterAll(async () => {
    await nc?.close().catch(() => undefined);
    await nats?.stop();
  });

  /** A replica on its own connection, which reconnects for ever as a service's does. */
  async function replica(id: string, bucket: string, log: Logger = silentLogger) {
    const own = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    const served = new Set<number>();
    const leases = new KvPartitionOwnership(own, {
      replicaId: id,
      partitions: PARTITIONS,
      bucket,
      ttlMs: 3_000,
      intervalMs: ROUND_MS,
      log,
    });
    const r = { id, leases, served, nc: own, unsafe: recordUnsafeRequests(own) };
    replicas.push(r);
    return {
      ...r,
      start: () =>
        leases.start(
          async (p) => void served.add(p),
          async (p) => void served.delete(p),
        ),
    };
  }

  /**
   * Partition → the replica holding its lease, read from the bucket with direct gets only (the
   * request kinds that are safe while the bucket is being made again); empty while it is missing.
   */
  async function leases(bucket: string): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    try {
      const kv = await nc.jetstream().views.kv(bucket, { bindOnly: true, allow_direct: true });
      for (let p = 0; p < PARTITIONS; p++) {
        const entry = await kv.get(`p.${p}`);
        if (entry?.operation === "PUT") out.set(p, entry.string());
      }
    } catch {
      // The bucket is gone, or NATS is unreachable for now.
    }
    return out;
  }

  /**
   * Waits until every partition is leased in `bucket`, each to a replica that serves it and that no
   * other replica serves, and every replica serves at least `least` partitions.
   */
  async function waitForShares(
    bucket: string,
    rs: { id: string; served: Set<number> }[],
    least = 1,
    timeoutMs = 60_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const held = await leases(bucket);
      const agreed = [...Array(PARTITIONS).keys()].every((p) => {
        const holder = held.get(p);
        return rs.every((r) => r.served.has(p) === (r.id === holder));
      });
      if (held.size === PARTITIONS && agreed && rs.every((r) => r.served.size >= least)) return;
      if (Date.now() > deadline) {
        throw new Error(
          `leases ${JSON.stringify(Object.fromEntries(held))}; served ${JSON.stringify(rs.map((r) => [r.id, [...r.served].sort()]))}; nats-server: ${JSON.stringify(nats.report())}`,
        );
      }
      await sleep(50);
    }
  }

  const freshBucket = () => `leases_${++bucketSerial}`;

  it("the first round fails (NATS down as the replica starts): start still resolves, and the replica leases every partition once NATS is back", async () => {
    const bucket = freshBucket();
    const r = await replica("r1", bucket);
    await nats.down();
    try {
      // Resolves once its first round has failed: a failed round never fails the replica's start.
      await r.start();
      expect([...r.served]).toEqual([]);
    } finally {
      await nats.up();
    }
    await waitForShares(bucket, [r]);
  });

  it("the first round fails (the bucket the replica opened takes no writes): start resolves, and the bucket made again is leased", async () => {
    const bucket = freshBucket();
    // A stream under the bucket's name whose subjects are not the bucket's: it is found when the
    // replica opens the bucket, and its first round's writes find no stream, as after the bucket
    // was deleted between the two.
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({
      name: `KV_${bucket}`,
      subjects: [`elsewhere.${bucket}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_msgs_per_subject: 1,
      allow_direct: true,
    });
    const warnings: string[] = [];
    const r = await replica("r1", bucket, {
      ...silentLogger,
      warn: (_o, msg) => void warnings.push(String(msg)),
    });
    await r.start();
    expect([...r.served]).toEqual([]);
    expect(warnings).toContain("partition lease round failed");
    expect(await jsm.streams.delete(`KV_${bucket}`)).toBe(true);
    await waitForShares(bucket, [r]);
  });

  it("the bucket deleted while two replicas run, over and over and while they make it again: nats-server never exits, and they share every partition again", async () => {
    const bucket = freshBucket();
    const a = await replica("a", bucket);
    const b = await replica("b", bucket);
    await a.start();
    await b.start();
    await waitForShares(bucket, [a, b]);
    const jsm = await nc.jetstreamManager();
    // Deleted as soon as a replica has made it again, within a round's time, so deletions land
    // while a replica is making the bucket again and the other reads it: the window in which some
    // JetStream requests end nats-server 2.9.
    for (let i = 0; i < 8; i++) {
      const deadline = Date.now() + 60_000;
      while (!(await jsm.streams.info(`KV_${bucket}`).catch(() => null))) {
        if (Date.now() > deadline)
          throw new Error(`the bucket was not made again; ${JSON.stringify(nats.report())}`);
        await sleep(10);
      }
      await sleep(Math.random() * ROUND_MS);
      expect(await jsm.streams.delete(`KV_${bucket}`)).toBe(true);
    }
    // Each its share, ceil(8 / 2), once the rebalance settles.
    await waitForShares(bucket, [a, b], PARTITIONS / 2);
  });

  it("the bucket deleted and NATS restarted while the replicas start: they lease every partition once both are back", async () => {
    const bucket = freshBucket();
    const a = await replica("a", bucket);
    const b = await replica("b", bucket);
    await a.start();
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(`KV_${bucket}`);
    await nats.down();
    try {
      await b.start();
    } finally {
      await nats.up();
    }
    await waitForShares(bucket, [a, b]);
  });
});
