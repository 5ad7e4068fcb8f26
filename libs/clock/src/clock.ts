// The injected clock (ARCHITECTURE rule 7): the pure part, which takes no bus.
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

/** Throws `RangeError` unless `ms` is a whole number of milliseconds ≥ 0 (a clock only moves forward). */
export function checkStep(ms: number): void {
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
