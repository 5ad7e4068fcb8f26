// Envelopes, and sending one with retries within its deadline (hand-overs, restarts, lost replies).
import { randomUUID } from "node:crypto";
import type { Identity } from "@baton/protocol";
import { type Bus, BusRemoteError, BusUnavailable, type Envelope } from "./bus.ts";

/**
 * Builds an envelope with a fresh id: `type` names the call in logs (`engine.claim`), `deadline` is
 * epoch ms (wall clock). The typed `call` builds its own and adds the trace context.
 */
export function envelope<P>(
  type: string,
  identity: Identity | null,
  payload: P,
  deadline: number,
): Envelope<P> {
  return { type, id: randomUUID(), identity, deadline, payload };
}

/** Options of {@link requestWithRetry}. */
export interface RetryOptions {
  /**
   * How long one attempt waits for its reply before the same envelope is sent again, ms. Only for
   * calls whose resend is harmless: writes idempotent on their `requestId` (and fenced by the run's
   * `rev`), ticks, reads. Without it one attempt waits until the deadline.
   */
  attemptMs?: number;
  /** Sleeps between attempts that found nobody serving (tests replace it). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Sends a request, retrying until the envelope's `deadline` (epoch ms, wall clock) while a retry can
 * help:
 *
 * - nobody serves the subject (a partition hand-over, a restarting service): sent again after a
 *   short back-off (25 ms, doubling to 500 ms);
 * - the handler said a retry can help ({@link RetryableError}): likewise;
 * - with `attemptMs`, an attempt got no reply in that time: sent again at once. The replica it
 *   went to may have died or stalled with it (a `kill -9`, a stopped host), and NATS routes the
 *   new attempt to whoever serves the subject now, so a write whose partition changed owner
 *   reaches the new owner as soon as it serves (issue #8, part 4).
 *
 * Throws the last {@link BusUnavailable} / {@link BusRemoteError} when the deadline passes or the
 * failure is not one a retry can help; the gateway answers `retry` then (ARCHITECTURE rule 5).
 */
export async function requestWithRetry(
  bus: Bus,
  subject: string,
  env: Envelope,
  options: RetryOptions = {},
): Promise<unknown> {
  const deadline = env.deadline;
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  let delay = 25;
  for (;;) {
    const remaining = deadline - Date.now();
    const attempt = Math.min(remaining, options.attemptMs ?? remaining);
    try {
      return await bus.request(subject, env, Math.max(attempt, 1));
    } catch (error) {
      // Only a call with attempts of its own is sent again after a time-out. Without attemptMs the one
      // attempt was given the whole deadline; a timer that fires a millisecond before Date.now()
      // reaches it must not send a call whose resend is not harmless a second time.
      if (
        error instanceof BusUnavailable &&
        error.reason === "timeout" &&
        options.attemptMs !== undefined &&
        Date.now() < deadline
      )
        continue;
      const retryable =
        (error instanceof BusUnavailable && error.reason === "no_responders") ||
        (error instanceof BusRemoteError && error.retryable);
      if (!retryable || Date.now() + delay >= deadline) throw error;
      await sleep(delay);
      delay = Math.min(delay * 2, 500);
    }
  }
}
