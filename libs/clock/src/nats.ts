// The manual clock shared by every service of a distributed deployment, kept in NATS KV.

import { isMissingStream, type NatsBus } from "@baton/bus";
import type { KV, KvEntry, Subscription as NatsSubscription, QueuedIterator } from "nats";
import {
  type AdvanceRecord,
  type Clock,
  type ClockMode,
  type ClockMove,
  type ClockMover,
  checkStep,
  type ManualClockState,
  planAdvance,
  systemClock,
} from "./clock.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const KEY = "now";

/** The KV value of a {@link ManualClockState}: JSON; a bare integer (an older value) is a time with no requests. */
function decodeState(bytes: Uint8Array | undefined): ManualClockState | null {
  if (!bytes || bytes.length === 0) return null;
  const text = decoder.decode(bytes);
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === "number") return Number.isSafeInteger(value) ? { now: value, requests: [] } : null;
    const v = value as { now?: unknown; requests?: unknown };
    if (typeof v?.now !== "number" || !Number.isSafeInteger(v.now)) return null;
    const requests = Array.isArray(v.requests)
      ? (v.requests as AdvanceRecord[]).filter(
          (r) =>
            typeof r?.id === "string" &&
            Number.isSafeInteger(r.ms) &&
            Number.isSafeInteger(r.from) &&
            Number.isSafeInteger(r.to),
        )
      : [];
    return { now: v.now, requests };
  } catch {
    return null;
  }
}

const encodeState = (state: ManualClockState) => encoder.encode(JSON.stringify(state));

/**
 * The clock bucket's settings: one value, no history, read with direct gets. Never read it with
 * `STREAM.MSG.GET` (a KV bound without `allow_direct`): that request ends nats-server 2.9 when it
 * reaches a bucket that is being made again (issue #8), which is exactly when services read it.
 */
const BUCKET_OPTIONS = { history: 1, allow_direct: true } as const;

/** How often a {@link NatsClock} re-reads the shared time even when nothing announced a move, ms. */
export const NATS_CLOCK_RESYNC_MS = 2_000;

/** One read of {@link NatsClock.sync}, ms, and how many it makes before keeping the last time known. */
const SYNC_READ_TIMEOUT_MS = 1_000;
const SYNC_ATTEMPTS = 3;

/**
 * A manual clock shared by every service of a distributed deployment (`BATON_CLOCK=manual` on each
 * `baton serve`). Meant for tests and trials, not production.
 *
 * - The time is durable in the NATS KV bucket `<namespace>_clock` (key `now`, JSON
 *   {@link ManualClockState}), so a restarted service, or one started later, continues from it and
 *   never goes backwards.
 * - A move is a compare-and-set on that key (concurrent advances add up; a request id seen before
 *   moves nothing), then a core NATS message on `<namespace>.clock.moved` that every instance
 *   applies in its subscription callback: on one NATS server a connection's messages are delivered
 *   in order, so requests the mover sends after it (the scheduler's ticks, the reply to the admin
 *   call) usually reach services that already read the new time. That message is a fast path only.
 * - Reliably, every instance follows the key itself: a KV watch (an ordered JetStream consumer,
 *   which resumes after a reconnect and resets on a gap, so a move made while this service was cut
 *   off is delivered when it is back), restarted if it ends, plus a re-read every
 *   {@link NATS_CLOCK_RESYNC_MS}. And {@link sync} reads the key afresh on demand: the engine does
 *   before every `tick`, so a tick never applies timers at a time older than the scheduler's.
 * - The bucket may be lost (deleted, or gone with the JetStream store; issue #8): whichever
 *   instance finds it missing first makes it again with the latest state it knew, so the time
 *   never goes backwards and the remembered advances survive when this instance knew them.
 */
export class NatsClock implements Clock, ClockMover {
  private current: number;
  private readonly listeners = new Set<(now: number) => void>();
  private moving: Promise<unknown> = Promise.resolve();
  private closed = false;
  private watcher: QueuedIterator<KvEntry> | null = null;
  private resync: ReturnType<typeof setInterval> | null = null;
  /** The latest stored state this instance read or wrote, to put back if the bucket is lost. */
  private known: ManualClockState;
  private restoring: Promise<void> | null = null;

  private readonly bus: NatsBus;
  private readonly kv: KV;
  /** The same bucket with a short request timeout, for {@link sync}. */
  private readonly reader: KV;
  private readonly sub: NatsSubscription;

  private constructor(parts: { bus: NatsBus; kv: KV; reader: KV; sub: NatsSubscription; start: number }) {
    this.bus = parts.bus;
    this.kv = parts.kv;
    this.reader = parts.reader;
    this.sub = parts.sub;
    this.current = parts.start;
    this.known = { now: parts.start, requests: [] };
  }

  /** The KV bucket holding a namespace's shared manual time. */
  static bucket(namespace: string): string {
    return `${namespace}_clock`;
  }

  /** The core subject a namespace's clock moves are announced on. */
  static subject(namespace: string): string {
    return `${namespace}.clock.moved`;
  }

  /**
   * Joins the namespace's shared manual clock: reads the durable time, or starts it at the wall
   * clock's time when this is the first service of the deployment, then follows it (see the class
   * comment). `resyncMs`: how often to re-read it regardless (default {@link NATS_CLOCK_RESYNC_MS}).
   */
  static async open(bus: NatsBus, options: { resyncMs?: number } = {}): Promise<NatsClock> {
    const nc = bus.connection;
    let clock: NatsClock | null = null;
    let early = 0;
    // Subscribe before reading the stored time, so a move made in between is not missed.
    const sub = nc.subscribe(NatsClock.subject(bus.namespace), {
      callback: (err, msg) => {
        if (err) return;
        const t = decodeState(msg.data)?.now ?? null;
        if (t === null) return;
        if (clock) clock.set(t);
        else early = Math.max(early, t);
      },
    });
    const kv = await nc.jetstream().views.kv(NatsClock.bucket(bus.namespace), BUCKET_OPTIONS);
    let stored = decodeState((await kv.get(KEY))?.value)?.now ?? null;
    if (stored === null) {
      try {
        const start = Date.now();
        await kv.create(KEY, encodeState({ now: start, requests: [] }));
        stored = start;
      } catch {
        // Another service created it first.
        stored = decodeState((await kv.get(KEY))?.value)?.now ?? Date.now();
      }
    }
    // A read sent while the connection is down is lost, not replayed on reconnect: sync() retries
    // short reads rather than wait out the default 5 s JetStream timeout once.
    const reader = await nc
      .jetstream({ timeout: SYNC_READ_TIMEOUT_MS })
      .views.kv(NatsClock.bucket(bus.namespace), { bindOnly: true, allow_direct: true });
    clock = new NatsClock({ bus, kv, reader, sub, start: Math.max(stored, early) });
    clock.follow(options.resyncMs ?? NATS_CLOCK_RESYNC_MS);
    return clock;
  }

  now(): number {
    return this.current;
  }

  async sync(): Promise<number> {
    for (let attempt = 0; attempt < SYNC_ATTEMPTS && !this.bus.connection.isClosed(); attempt++) {
      try {
        const entry = await this.reader.get(KEY);
        const state = decodeState(entry?.value);
        if (state) this.learn(state);
        else if (entry === null) await this.restore();
        return this.current;
      } catch {
        // The bucket is gone (made again now), or NATS is unreachable for now (a reconnect): try
        // again shortly.
        if (!(await this.recover())) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    // Keep the last time we knew; the watch and the next re-read catch up.
    return this.current;
  }

  /** Applies a stored state read from the bucket. */
  private learn(state: ManualClockState): void {
    if (state.now >= this.known.now) this.known = state;
    this.set(state.now);
  }

  /**
   * After a failed read or write of the bucket: makes it again if it is gone, and says whether it
   * did. Any other failure (NATS unreachable) is left to the caller's next try. Never rejects.
   */
  private async recover(): Promise<boolean> {
    try {
      const jsm = await this.bus.connection.jetstreamManager({
        timeout: SYNC_READ_TIMEOUT_MS,
        checkAPI: false,
      });
      await jsm.streams.info(`KV_${NatsClock.bucket(this.bus.namespace)}`);
      return false;
    } catch (error) {
      if (!isMissingStream(error)) return false;
      return this.restore().then(
        () => true,
        () => false,
      );
    }
  }

  /**
   * Makes the bucket and its key again when they are gone, from the latest state this instance
   * knew (never earlier than its current time); another instance that got there first wins, and
   * its state is read instead. Restarts the watch, which cannot follow a stream made anew. One
   * restore at a time.
   */
  private restore(): Promise<void> {
    this.restoring ??= (async () => {
      try {
        const nc = this.bus.connection;
        await nc.jetstream().views.kv(NatsClock.bucket(this.bus.namespace), BUCKET_OPTIONS);
        const state = { ...this.known, now: Math.max(this.known.now, this.current) };
        try {
          await this.kv.create(KEY, encodeState(state));
        } catch {
          // Another instance put it back first (or it was there): follow what is stored.
        }
        const stored = decodeState((await this.kv.get(KEY))?.value);
        if (stored) this.learn(stored);
        this.watcher?.stop();
      } finally {
        this.restoring = null;
      }
    })();
    return this.restoring;
  }

  private set(ms: number): void {
    if (!(ms > this.current)) return;
    this.current = ms;
    for (const listener of this.listeners) listener(ms);
  }

  /** Follows the key: a watch that is restarted whenever it ends, and a periodic re-read. */
  private follow(resyncMs: number): void {
    const nc = this.bus.connection;
    this.resync = setInterval(() => void this.sync(), resyncMs);
    this.resync.unref?.();
    const watch = async () => {
      while (!this.closed && !nc.isClosed()) {
        try {
          const updates = await this.kv.watch({ key: KEY });
          this.watcher = updates;
          if (this.closed) updates.stop();
          for await (const entry of updates) {
            const state = decodeState(entry.value);
            if (state) this.learn(state);
          }
        } catch {
          // The watch failed or ended (consumer lost, connection draining): start it again below,
          // after making the bucket again if it is gone.
          await this.recover().catch(() => false);
        }
        if (this.closed || nc.isClosed()) return;
        await new Promise<void>((resolve) => setTimeout(resolve, 1_000).unref?.());
      }
    };
    void watch();
  }

  advance(ms: number, requestId?: string): Promise<ClockMove> {
    checkStep(ms);
    const move = this.moving.then(() => this.move(ms, requestId));
    this.moving = move.catch(() => undefined);
    return move;
  }

  private async move(ms: number, requestId: string | undefined): Promise<ClockMove> {
    for (let attempt = 0; attempt < 100; attempt++) {
      let entry: KvEntry | null;
      try {
        entry = await this.kv.get(KEY);
      } catch (error) {
        if (!(await this.recover())) throw error;
        continue;
      }
      if (entry === null) {
        // The key is gone (its bucket was made anew, empty): put back what this instance knew.
        await this.restore();
        entry = await this.kv.get(KEY);
      }
      const stored = decodeState(entry?.value);
      const state: ManualClockState = {
        now: Math.max(stored?.now ?? 0, this.current),
        requests: stored?.requests ?? [],
      };
      const { next, move } = planAdvance(state, ms, requestId);
      if (next === state) {
        this.set(state.now);
        return move;
      }
      try {
        if (entry) await this.kv.update(KEY, encodeState(next), entry.revision);
        else await this.kv.create(KEY, encodeState(next));
      } catch {
        // Another replica moved it in between, or the bucket went: read again.
        continue;
      }
      this.learn(next);
      const nc = this.bus.connection;
      nc.publish(NatsClock.subject(this.bus.namespace), encoder.encode(String(next.now)));
      // The server has the announcement before anything this connection sends next.
      await nc.flush();
      return move;
    }
    throw new Error("the shared clock kept changing under this advance; try again");
  }

  onChange(listener: (now: number) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Stops following the shared time. */
  close(): void {
    this.closed = true;
    if (this.resync) clearInterval(this.resync);
    this.watcher?.stop();
    this.sub.unsubscribe();
  }
}

/**
 * The clock a `baton serve` service runs on: {@link systemClock} for `real`, the deployment's shared
 * {@link NatsClock} for `manual` (which is also the scheduler's {@link ClockMover}).
 */
export async function clockFor(
  mode: ClockMode,
  bus: NatsBus,
): Promise<{ clock: Clock; mover: ClockMover | null }> {
  if (mode === "real") return { clock: systemClock, mover: null };
  const shared = await NatsClock.open(bus);
  return { clock: shared, mover: shared };
}
