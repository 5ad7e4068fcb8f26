import { describe, expect, it } from "vitest";
import { nextAttemptAt } from "./backoff.ts";

const policy = { baseMs: 10_000, maxMs: 3_600_000, giveUpMs: 24 * 3_600_000 };

describe("retry back-off (issue #11: exponential with jitter, up to 24 hours, on the injected clock)", () => {
  it("doubles the wait after each failure, with jitter in the upper half of it", () => {
    const now = 1_000_000;
    const giveUp = now + policy.giveUpMs;
    expect(nextAttemptAt(policy, 1, now, giveUp, 0)).toBe(now + 5_000);
    expect(nextAttemptAt(policy, 1, now, giveUp, 0.999_999)).toBe(now + 10_000);
    expect(nextAttemptAt(policy, 2, now, giveUp, 0)).toBe(now + 10_000);
    expect(nextAttemptAt(policy, 3, now, giveUp, 1)).toBe(now + 40_000);
  });

  it("never waits longer than the cap, however many attempts failed", () => {
    const now = 0;
    expect(nextAttemptAt(policy, 30, now, policy.giveUpMs, 1)).toBe(policy.maxMs);
    expect(nextAttemptAt(policy, 10_000, now, policy.giveUpMs, 0)).toBe(policy.maxMs / 2);
  });

  it("makes a last attempt at the give-up time, then gives up", () => {
    const giveUp = 100_000;
    expect(nextAttemptAt(policy, 5, 95_000, giveUp, 1)).toBe(giveUp);
    expect(nextAttemptAt(policy, 6, giveUp, giveUp, 0.5)).toBeNull();
    expect(nextAttemptAt(policy, 6, giveUp + 1, giveUp, 0.5)).toBeNull();
  });
});
