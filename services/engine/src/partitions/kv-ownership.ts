// Partition ownership shared by engine replicas through a NATS KV bucket.
import type { Logger } from "@baton/kit";
import {
  ErrorCode,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  NatsError,
  type StoredMsg,
} from "nats";
import type { PartitionOwnership } from "./ownership.ts";

/**
 * Partition ownership in a NATS KV bucket (ARCHITECTURE rule 5): a replica holds partition k while
 * its key `p.<k>` in the bucket names it. Every replica heartbeats a member key; each aims to own
 * `ceil(P / members)` partitions, taking free ones with `create` (fails if taken) and keeping its own
 * with `update` at the last revision (fails if someone else took it). The bucket's TTL ends the hold
 * of a replica that died. Losing a partition only stops serving it: writes are fenced by the run's
 * `rev` in PostgreSQL, so a replica that lost one cannot overwrite newer state.
 *
 * A blip never ends partition ownership (issue #8): a round that fails (NATS unreachable or slow, the bucket
 * lost or being made again), the first one included, is logged and retried on the next tick, after
 * opening the bucket again (which makes it when it is gone). The bucket is read with direct gets
 * only: the other reads (`STREAM.MSG.GET`, stream info with a subjects filter) end nats-server 2.9
 * when they reach a stream that is being made (a nil store), which is exactly when a lost bucket is.
 */
/**
 * Direct gets (`$JS.API.DIRECT.GET`), which nats.js 2.29's manager has (its KV reads use them) but
 * does not declare.
 */
type WithDirectGets = JetStreamManager & {
  direct: { getMessage(stream: string, query: { seq: number; next_by_subj: string }): Promise<StoredMsg> };
};

export class KvPartitionOwnership implements PartitionOwnership {
  private kv: KV | null = null;
  private jsm: WithDirectGets | null = null;
  private readonly owned = new Map<number, number>(); // partition → KV revision
  private timer: NodeJS.Timeout | null = null;
  private acquire: ((p: number) => Promise<void>) | null = null;
  private release: ((p: number) => Promise<void>) | null = null;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  /** The last round failed (or none ran yet): the next one opens the bucket first. */
  private failed = true;
  /** A round is running or queued. */
  private busy = false;

  /** The last round reached the bucket (heartbeat written, share taken); false before the first and after a failed one. */
  get joined(): boolean {
    return !this.failed && !this.stopped;
  }

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: {
      replicaId: string;
      partitions: number;
      /** The KV bucket, e.g. `baton_partitions` (one per namespace). */
      bucket: string;
      /** How long a hold lasts without a heartbeat, ms; a dead replica's partitions are free after it. */
      ttlMs?: number;
      /** How often to heartbeat and rebalance, ms. */
      intervalMs?: number;
      log: Logger;
    },
  ) {}

  /**
   * Runs a first round, then one every `intervalMs`. Resolves once the first round ended, whether
   * it took this replica's share or failed (then the next tick tries again); never rejects.
   */
  async start(
    onAcquire: (p: number) => Promise<void>,
    onRelease: (p: number) => Promise<void>,
  ): Promise<void> {
    this.acquire = onAcquire;
    this.release = onRelease;
    this.timer = setInterval(() => {
      // A round waiting on an unreachable NATS is not joined by more: they would run back to back
      // when it is back.
      if (!this.busy) void this.round();
    }, this.options.intervalMs ?? 2_000);
    await this.round();
  }

  /** One round, after the one before; a failure is logged and marks the next to open the bucket. */
  private round(): Promise<void> {
    this.busy = true;
    this.running = this.running
      .then(async () => {
        // After a failed round the bucket may be gone (deleted, or lost with the JetStream store):
        // make it again, with the same settings, before this round needs it.
        if (this.failed) await this.openBucket();
        await this.tick();
        this.failed = false;
      })
      .catch((error) => {
        this.failed = true;
        this.options.log.warn({ err: String(error) }, "partition lease round failed");
      })
      .finally(() => {
        this.busy = false;
      });
    return this.running;
  }

  /** Opens the ownership bucket, creating it when it does not exist. Sends no request but the open. */
  private async openBucket(): Promise<void> {
    this.jsm ??= (await this.nc.jetstreamManager({ checkAPI: false })) as WithDirectGets;
    const js = this.nc.jetstream();
    this.kv = await js.views.kv(this.options.bucket, {
      ttl: this.options.ttlMs ?? 10_000,
      history: 1,
      allow_direct: true,
    });
  }

  /** One heartbeat and rebalance round. */
  private async tick(): Promise<void> {
    const kv = this.kv;
    if (!kv || this.stopped) return;
    const me = this.options.replicaId;
    await kv.put(`m.${me}`, me);
    const members = await this.liveMembers();
    const share = Math.ceil(this.options.partitions / Math.max(members, 1));

    for (const [p, revision] of [...this.owned]) {
      const kept = await this.renew(kv, p, revision);
      if (kept !== null) {
        this.owned.set(p, kept);
        continue;
      }
      this.owned.delete(p);
      this.options.log.warn({ replica: me, partition: p }, "partition lease lost");
      await this.release?.(p);
    }
    const released: number[] = [];
    while (this.owned.size > share) {
      const [p, revision] = [...this.owned].pop() as [number, number];
      this.owned.delete(p);
      released.push(p);
      await this.release?.(p);
      await kv.delete(`p.${p}`, { previousSeq: revision }).catch(() => undefined);
    }
    if (released.length > 0)
      this.options.log.info(
        { replica: me, partitions: released.sort((a, b) => a - b), owned: this.owned.size, members },
        "partition ownership released (rebalance)",
      );
    const gained: number[] = [];
    if (this.owned.size < share) {
      for (let p = 0; p < this.options.partitions && this.owned.size < share; p++) {
        if (this.owned.has(p)) continue;
        try {
          const revision = await kv.create(`p.${p}`, me);
          this.owned.set(p, revision);
          gained.push(p);
          await this.acquire?.(p);
        } catch {
          // Owned by another replica.
        }
      }
    }
    if (gained.length > 0)
      this.options.log.info(
        { replica: me, partitions: gained, owned: this.owned.size, members },
        "partition ownership gained",
      );
  }

  /**
   * Keeps this replica's hold on partition `p` at `revision`; returns the new revision, or
   * null when another replica holds it now. A hold whose key is gone (it expired while NATS was
   * unreachable, or the bucket was lost and made again) and that nobody took is taken again at
   * once, so a blip does not hand every partition over twice. Throws when NATS cannot answer.
   */
  private async renew(kv: KV, p: number, revision: number): Promise<number | null> {
    const me = this.options.replicaId;
    try {
      return await kv.update(`p.${p}`, me, revision);
    } catch {
      const entry = await kv.get(`p.${p}`);
      // Ours still: an earlier renewal was applied but its answer lost in a blip.
      if (entry?.operation === "PUT") return entry.string() === me ? entry.revision : null;
      try {
        return await kv.create(`p.${p}`, me);
      } catch {
        return null; // another replica took it first
      }
    }
  }

  /**
   * How many replicas heartbeat: the `m.*` keys whose latest entry is a put. Walked with direct gets
   * (`next_by_subj`, one per member key and one more), never with `kv.keys()`, whose ordered
   * consumer can wait forever when entries expire (the bucket's TTL) while it lists them
   * (nats-server#3481), nor with a stream info's subjects filter, which ends nats-server 2.9 when it
   * reaches a bucket being made again. Each member key holds one entry (history 1).
   */
  private async liveMembers(): Promise<number> {
    const stream = `KV_${this.options.bucket}`;
    const next_by_subj = `$KV.${this.options.bucket}.m.>`;
    const jsm = this.jsm as WithDirectGets;
    let members = 0;
    for (let seq = 1; ; ) {
      let entry: StoredMsg;
      try {
        entry = await jsm.direct.getMessage(stream, { seq, next_by_subj });
      } catch (error) {
        if (error instanceof NatsError && error.code === ErrorCode.JetStream404NoMessages) return members;
        throw error;
      }
      // A put has no operation header; a delete or purge marks a replica that stopped.
      if (!entry.header.get("KV-Operation")) members++;
      seq = entry.seq + 1;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    const kv = this.kv;
    for (const [p, revision] of [...this.owned]) {
      this.owned.delete(p);
      await this.release?.(p);
      await kv?.delete(`p.${p}`, { previousSeq: revision }).catch(() => undefined);
    }
    await kv?.delete(`m.${this.options.replicaId}`).catch(() => undefined);
  }

  /** Partitions currently owned, for tests and metrics. */
  get partitions(): number[] {
    return [...this.owned.keys()].sort((a, b) => a - b);
  }
}
