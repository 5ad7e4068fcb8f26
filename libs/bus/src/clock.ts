/**
 * Time is injected (ARCHITECTURE rule 7): every service reads time through one {@link Clock}, so a
 * manual clock (`baton dev --clock manual`) moves leases, waits and `due` together in tests.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to (issue #5's `baton clock advance`). */
export class ManualClock implements Clock {
  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  /** Moves the clock forward by `ms` (≥ 0) and returns the new time. */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError("a clock only moves forward");
    this.current += ms;
    return this.current;
  }

  /** Sets the clock to `ms` when that is not earlier than now. */
  set(ms: number): void {
    if (ms > this.current) this.current = ms;
  }
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
