// When a failed delivery is tried again, and when it is given up (issue #11): pure, on the injected clock.

/** The retry policy of deliveries, ms. */
export interface RetryPolicy {
  /** The wait after the first failure, before jitter. */
  baseMs: number;
  /** The longest wait between two attempts, before jitter. */
  maxMs: number;
  /** How long after a delivery was created (or sent again by an operator) retrying stops. */
  giveUpMs: number;
}

/**
 * When the attempt after `attempts` failed ones is due (epoch ms, injected clock), or null when the
 * delivery is to be given up (`dead`): exponential back-off, `baseMs · 2^(attempts−1)` capped at
 * `maxMs`, with "equal jitter" (a random point in the upper half of that wait, `random` in [0, 1)),
 * so receivers that failed together are not retried together. The last retry lands no later than
 * `giveUpAt`; past it, null.
 */
export function nextAttemptAt(
  policy: RetryPolicy,
  attempts: number,
  now: number,
  giveUpAt: number,
  random: number,
): number | null {
  const exponent = Math.min(Math.max(attempts - 1, 0), 40);
  const wait = Math.min(policy.baseMs * 2 ** exponent, policy.maxMs);
  const jittered = Math.round(wait / 2 + (wait / 2) * Math.min(Math.max(random, 0), 1));
  const at = now + Math.max(jittered, 1);
  if (now >= giveUpAt) return null;
  return Math.min(at, giveUpAt);
}
