import { randomUUID } from "node:crypto";
import { parseDuration } from "@baton/process";
import { ApiError, adminCall as call } from "./admin-api.ts";

/** The clock as the admin API reports it. */
export interface ClockState {
  /** RFC 3339. */
  now: string;
  manual: boolean;
}

/** The outcome of `baton clock advance`. */
export interface Advanced extends ClockState {
  /** The time the advance moved the clock from, RFC 3339 (`now` is the time it moved it to). */
  from: string;
  /**
   * Timers with a fire time in (`from`, `now`] that the journal shows applied, by whatever
   * transition applied them (the scheduler's ticks, or a user write that found one expired).
   */
  applied: number;
}

/**
 * A duration for `baton clock advance`, in ms: the protocol's own form (§2.4: an integer followed by
 * `m`, `h` or `d`, e.g. `30m`, `4h`, `3d`), so a `wait: 3d` is passed by advancing `3d`. Null when
 * it is not one.
 */
export function advanceDuration(text: string): number | null {
  return parseDuration(text);
}

/** `GET /api/clock`: the server's time and whether it is manual. Needs an operator's token. */
export function clockNow(baseUrl: string, token: string): Promise<ClockState> {
  return call<ClockState>({ baseUrl, token }, { method: "GET", path: "/api/clock" });
}

/** Whether sending the same advance again can help: the server said `retry`, or the call got no answer. */
function retryable(error: unknown): boolean {
  if (error instanceof ApiError) return error.code === "retry" || error.status >= 500;
  // fetch failed (connection refused or reset) or timed out: the advance may or may not have moved.
  return error instanceof TypeError || (error instanceof DOMException && error.name === "TimeoutError");
}

/**
 * `baton clock advance`: moves the server's manual clock forward by `ms` and returns once every timer
 * that fell due has been applied.
 *
 * The call carries a fresh `requestId`, so it is idempotent: when the server answers with timers
 * still `pending` (its call deadline came first), says `retry`, or does not answer at all, this sends
 * the very same call again, which moves the clock at most once and carries on applying up to the
 * same target. It gives up after `timeoutMs` (wall clock) with a message saying where the clock
 * stands and how to carry on without moving it again. Throws the server's refusal (`conflict` on a
 * real-time clock, `forbidden`, `invalid`) at once.
 */
export async function advanceClock(
  baseUrl: string,
  token: string,
  ms: number,
  timeoutMs = 300_000,
): Promise<Advanced> {
  const requestId = randomUUID();
  const started = Date.now();
  const deadline = started + timeoutMs;
  let last: (Advanced & { pending?: number }) | null = null;
  let lastError: unknown = null;
  for (;;) {
    try {
      const remaining = Math.max(deadline - Date.now(), 1_000);
      const r = await call<Advanced & { pending?: number }>(
        { baseUrl, token },
        {
          method: "POST",
          path: "/api/clock/advance",
          body: { ms, requestId },
          // The server answers within its own call deadline; this only guards against a hung connection.
          timeoutMs: Math.min(remaining + 30_000, 120_000),
        },
      );
      if (!r.pending) return { now: r.now, manual: r.manual, from: r.from, applied: r.applied };
      last = r;
      lastError = null;
    } catch (error) {
      if (!retryable(error)) throw error;
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const waited = Math.round((Date.now() - started) / 1000);
      const carryOn =
        'run "baton clock advance 0m" to carry on applying them (it does not move the clock), and check the engine is running';
      if (last)
        throw new Error(
          `the clock moved to ${last.now}, but ${last.pending} timers due by then were still not applied after ${waited} s; ${carryOn}`,
        );
      throw new Error(
        `the clock advance was not confirmed within ${waited} s (${String(lastError)}); it may have moved: check with "baton clock now" before advancing again`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, last ? 100 : 500));
  }
}
