import type { KV, KvEntry, Subscription as NatsSubscription, QueuedIterator } from "nats";
import { isMissingStream, type NatsBus } from "./nats.ts";

/**
 * Time is injected (ARCHITECTURE rule 7): every service reads time through one {@link Clock}, so a
 * manual clock (`baton dev --clock manual`, `BATON_CLOCK=manual`) moves leases, waits and `due`
 * together in tests.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Only on a clock kept outside this process (the shared manual clock in NATS KV): reads the time
   * afresh from where it is kept, applies it, and resolves with {@link now}. Never rejects: when the
   * store cannot be read it resolves with the last time this process knew. The engine calls it
   * before a `tick`, so a tick applies what is due at the time the scheduler moved the clock to even
   * if this process missed the move's announcement (issue #5).
   */
  sync?(): Promise<number>;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Which clock a deployment runs on: real time (the default) or a clock only an operator moves. */
export type ClockMode = "real" | "manual";

/** What one `advance` did to a manual clock (epoch ms). */
export interface ClockMove {
  /** The time the move started from. */
  from: number;
  /** The time it moved the clock to (`from` + the step). */
  to: number;
  /** True when the request id had moved the clock already: nothing moved now, `from`/`to` are that move's. */
  replayed: boolean;
}

/** An advance already recorded under a request id, so a retry of it does not move the clock again. */
export interface AdvanceRecord {
  /** The caller's request id. */
  id: string;
  /** The step it asked for, ms. */
  ms: number;
  /** The move it made, epoch ms. */
  from: number;
  to: number;
}

/** A manual clock's durable state: its time and the advances a retry may repeat. */
export interface ManualClockState {
  /** Epoch ms. */
  now: number;
  /** The latest {@link REMEMBERED_ADVANCES} advances that carried a request id, oldest first. */
  requests: AdvanceRecord[];
}

/** How many advances with a request id a manual clock remembers for retries. */
export const REMEMBERED_ADVANCES = 100;

/** Thrown by {@link ClockMover.advance} when a request id already moved the clock by another step. */
export class AdvanceConflict extends Error {
  override name = "AdvanceConflict";
}

function checkStep(ms: number): void {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError("a clock only moves forward, by whole ms");
}

/**
 * The pure rule of a manual clock's move (both stores use it): `ms` forward from `state.now`,
 * remembered under `requestId` when one is given; a request id seen before returns its recorded
 * move and leaves the state as it is (`next === state`). A step of 0 moves and records nothing.
 * Throws `RangeError` for a negative, fractional or unsafe `ms`, {@link AdvanceConflict} for a
 * request id recorded with another step.
 */
export function planAdvance(
  state: ManualClockState,
  ms: number,
  requestId?: string,
): { next: ManualClockState; move: ClockMove } {
  checkStep(ms);
  if (requestId !== undefined) {
    const seen = state.requests.find((r) => r.id === requestId);
    if (seen) {
      if (seen.ms !== ms)
        throw new AdvanceConflict(
          `requestId ${requestId} already advanced the clock by ${seen.ms} ms; send a new requestId`,
        );
      return { next: state, move: { from: seen.from, to: seen.to, replayed: true } };
    }
  }
  if (ms === 0) return { next: state, move: { from: state.now, to: state.now, replayed: false } };
  const to = state.now + ms;
  const requests =
    requestId === undefined
      ? state.requests
      : [...state.requests, { id: requestId, ms, from: state.now, to }].slice(-REMEMBERED_ADVANCES);
  return { next: { now: to, requests }, move: { from: state.now, to, replayed: false } };
}

/**
 * The handle the scheduler moves a manual clock with (issue #5's `baton clock advance`). Only a
 * manual clock has one; real time cannot be moved.
 */
export interface ClockMover {
  /**
   * Moves the clock forward by `ms` (a whole number ≥ 0) and resolves with the move, once the new
   * time is durable and every service reading this clock has been told. With a `requestId` the move
   * is idempotent: a retry with the same id and step moves nothing and resolves with the first
   * move (`replayed: true`), among the last {@link REMEMBERED_ADVANCES}. Moves are serialized: two
   * concurrent advances of 1h move the clock by 2h. Throws `RangeError` for a negative, fractional
   * or non-finite `ms`, {@link AdvanceConflict} for a request id used with another step.
   */
  advance(ms: number, requestId?: string): Promise<ClockMove>;
  /** Calls `listener` with the new time after every move. Returns a function that stops it. */
  onChange(listener: (now: number) => void): () => void;
}

/**
 * A clock that moves only when told to, in one process (`baton dev --clock manual`). It never goes
 * backwards. Persistence and the scheduler's {@link ClockMover} are layered on top (the scheduler
 * keeps it in the `settings` table).
 */
export class ManualClock implements Clock {
  private readonly listeners = new Set<(now: number) => void>();

  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  /** Moves the clock forward by `ms` (whole, ≥ 0) and returns the new time. */
  advance(ms: number): number {
    checkStep(ms);
    this.set(this.current + ms);
    return this.current;
  }

  /** Sets the clock to `ms` when that is later than now; an earlier time is ignored. */
  set(ms: number): void {
    if (!(ms > this.current)) return;
    this.current = ms;
    for (const listener of this.listeners) listener(ms);
  }

  /** Calls `listener` with the new time whenever the clock moves. Returns a function that stops it. */
  onChange(listener: (now: number) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
}

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

  private constructor(
    private readonly bus: NatsBus,
    private readonly kv: KV,
    /** The same bucket with a short request timeout, for {@link sync}. */
    private readonly reader: KV,
    private readonly sub: NatsSubscription,
    start: number,
  ) {
    this.current = start;
    this.known = { now: start, requests: [] };
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
    clock = new NatsClock(bus, kv, reader, sub, Math.max(stored, early));
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

/** A minimal structured logger (pino's shape), so libraries do not pick the logging library. */
export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
}

/** A logger that drops everything (tests that assert on values, not logs). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };
