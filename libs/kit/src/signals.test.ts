import { afterEach, describe, expect, it, vi } from "vitest";
import { ServiceLoop } from "./signals.ts";

/** ServiceLoop: the background loop the scheduler's delivery and the notifier's deliveries share. */

afterEach(() => {
  vi.useRealTimers();
});

describe("ServiceLoop", () => {
  it("sleeps what a round asks, a wake cuts the sleep short, and stop ends the loop after its round", async () => {
    vi.useFakeTimers();
    let rounds = 0;
    const loop = new ServiceLoop(async () => {
      rounds++;
      return 60_000;
    });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(rounds).toBe(1);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(rounds).toBe(1);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(rounds).toBe(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(rounds).toBe(3);
    await loop.stop();
    expect(loop.stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(rounds).toBe(3);
  });

  it("with wokenSkipsSleep, news during a round starts the next at once; without it, the sleep is taken", async () => {
    vi.useFakeTimers();
    for (const wokenSkipsSleep of [true, false]) {
      let rounds = 0;
      const loop = new ServiceLoop(
        async () => {
          rounds++;
          if (rounds === 1) loop.wake();
          return 60_000;
        },
        { wokenSkipsSleep },
      );
      loop.start();
      await vi.advanceTimersByTimeAsync(0);
      expect(rounds).toBe(wokenSkipsSleep ? 2 : 1);
      await loop.stop();
    }
  });

  it("a round that asks for no sleep is followed by the next at once", async () => {
    let rounds = 0;
    const loop = new ServiceLoop(async () => (++rounds < 5 ? 0 : 60_000));
    loop.start();
    await vi.waitFor(() => expect(rounds).toBe(5), { timeout: 5_000 });
    await loop.stop();
    expect(rounds).toBe(5);
  });
});
