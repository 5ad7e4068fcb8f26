import type { KV, Subscription as NatsSubscription } from "nats";
import type { NatsBus } from "./nats.ts";

/**
 * Time is injected (ARCHITECTURE rule 7): every service reads time through one {@link Clock}, so a
 * manual clock (`baton dev --clock manual`, `BATON_CLOCK=manual`) moves leases, waits and `due`
 * together in tests.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Which clock a deployment runs on: real time (the default) or a clock only an operator moves. */
export type ClockMode = "real" | "manual";

/**
 * The handle the scheduler moves a manual clock with (issue #5's `baton clock advance`). Only a
 * manual clock has one; real time cannot be moved.
 */
export interface ClockMover {
  /**
   * Moves the clock forward by `ms` (a whole number ≥ 0) and resolves with the new time, epoch ms,
   * once the new time is durable and every service reading this clock has been told. Moves are
   * serialized: two concurrent advances of 1h move the clock by 2h. Throws `RangeError` for a
   * negative, fractional or non-finite `ms`.
   */
  advance(ms: number): Promise<number>;
  /** Calls `listener` with the new time after every move. Returns a function that stops it. */
  onChange(listener: (now: number) => void): () => void;
}

function checkStep(ms: number): void {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError("a clock only moves forward, by whole ms");
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

function decodeTime(bytes: Uint8Array | undefined): number | null {
  if (!bytes || bytes.length === 0) return null;
  const n = Number(decoder.decode(bytes));
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * A manual clock shared by every service of a distributed deployment (`BATON_CLOCK=manual` on each
 * `baton serve`). Meant for tests and trials, not production.
 *
 * - The time is durable in the NATS KV bucket `<namespace>_clock` (key `now`), so a restarted service,
 *   or one started later, continues from it and never goes backwards.
 * - A move is a compare-and-set on that key (concurrent advances add up), then a core NATS message on
 *   `<namespace>.clock.moved` that every instance applies synchronously in its subscription callback.
 *   On one NATS server a connection's messages are delivered in order, so any request a service
 *   receives after the move's publisher sent it (the scheduler's `tick`s, the reply to the admin call,
 *   and so every later request a client makes) already sees the new time.
 */
export class NatsClock implements Clock, ClockMover {
  private current: number;
  private readonly listeners = new Set<(now: number) => void>();
  private moving: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly bus: NatsBus,
    private readonly kv: KV,
    private readonly sub: NatsSubscription,
    start: number,
  ) {
    this.current = start;
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
   * clock's time when this is the first service of the deployment.
   */
  static async open(bus: NatsBus): Promise<NatsClock> {
    const nc = bus.connection;
    let clock: NatsClock | null = null;
    let early = 0;
    // Subscribe before reading the stored time, so a move made in between is not missed.
    const sub = nc.subscribe(NatsClock.subject(bus.namespace), {
      callback: (err, msg) => {
        if (err) return;
        const t = decodeTime(msg.data);
        if (t === null) return;
        if (clock) clock.set(t);
        else early = Math.max(early, t);
      },
    });
    const kv = await nc.jetstream().views.kv(NatsClock.bucket(bus.namespace), { history: 1 });
    let stored = decodeTime((await kv.get(KEY))?.value);
    if (stored === null) {
      try {
        const start = Date.now();
        await kv.create(KEY, encoder.encode(String(start)));
        stored = start;
      } catch {
        // Another service created it first.
        stored = decodeTime((await kv.get(KEY))?.value) ?? Date.now();
      }
    }
    clock = new NatsClock(bus, kv, sub, Math.max(stored, early));
    return clock;
  }

  now(): number {
    return this.current;
  }

  private set(ms: number): void {
    if (!(ms > this.current)) return;
    this.current = ms;
    for (const listener of this.listeners) listener(ms);
  }

  advance(ms: number): Promise<number> {
    checkStep(ms);
    const move = this.moving.then(() => this.move(ms));
    this.moving = move.catch(() => undefined);
    return move;
  }

  private async move(ms: number): Promise<number> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const entry = await this.kv.get(KEY);
      const base = Math.max(decodeTime(entry?.value) ?? 0, this.current);
      const next = base + ms;
      try {
        if (entry) await this.kv.update(KEY, encoder.encode(String(next)), entry.revision);
        else await this.kv.create(KEY, encoder.encode(String(next)));
      } catch {
        continue; // another replica moved it in between: read again
      }
      this.set(next);
      const nc = this.bus.connection;
      nc.publish(NatsClock.subject(this.bus.namespace), encoder.encode(String(next)));
      // The server has the announcement before anything this connection sends next.
      await nc.flush();
      return next;
    }
    throw new Error("the shared clock kept changing under this advance; try again");
  }

  onChange(listener: (now: number) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Stops following the shared time. */
  close(): void {
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
