import { describe, expect, it } from "vitest";
import { type Bus, BusRemoteError, BusUnavailable, type Envelope } from "./bus.ts";
import { InProcessBus } from "./in-process.ts";
import { envelope, requestWithRetry } from "./retry.ts";

/**
 * Per-attempt time-outs (issue #8, part 4): a call sent to a replica that died or stalled with it
 * is sent again, and reaches whichever replica serves the subject then, within the call deadline.
 */

/** A bus whose replies are scripted per attempt: `lost` never answers (a replica killed with it). */
function scripted(script: ("lost" | "no_responders" | "fatal" | { value: unknown })[]) {
  const seen: { id: string; timeoutMs: number }[] = [];
  const bus: Pick<Bus, "request"> = {
    async request(subject: string, env: Envelope, timeoutMs: number) {
      seen.push({ id: env.id, timeoutMs });
      const step = script[Math.min(seen.length - 1, script.length - 1)];
      if (step === "lost") {
        await new Promise((r) => setTimeout(r, timeoutMs));
        throw new BusUnavailable(subject, "timeout");
      }
      if (step === "no_responders") throw new BusUnavailable(subject, "no_responders");
      if (step === "fatal") throw new BusRemoteError(subject, "boom", false);
      return step?.value;
    },
  };
  return { bus: bus as Bus, seen };
}

const noSleep = async () => undefined;

describe("requestWithRetry: per-attempt time-outs (issue #8, part 4)", () => {
  it("sends the same envelope again when an attempt gets no reply, and returns the new owner's answer", async () => {
    const { bus, seen } = scripted(["lost", "no_responders", "no_responders", { value: "served" }]);
    const deadline = Date.now() + 10_000;
    const env = envelope("engine.claim", null, {}, deadline);
    const value = await requestWithRetry(bus, "engine.p3", env, { attemptMs: 20, sleep: noSleep });
    expect(value).toBe("served");
    expect(seen.map((s) => s.id)).toEqual([env.id, env.id, env.id, env.id]);
    expect(seen.every((s) => s.timeoutMs <= 20)).toBe(true);
  });

  it("without attemptMs, one attempt waits until the deadline (calls whose resend is not harmless)", async () => {
    const { bus, seen } = scripted(["lost"]);
    const deadline = Date.now() + 60;
    const env = envelope("registry.import", null, {}, deadline);
    await expect(requestWithRetry(bus, "registry", env, { sleep: noSleep })).rejects.toThrow(BusUnavailable);
    expect(seen).toHaveLength(1);
  });

  it("without attemptMs, a time-out that comes back before the deadline by the wall clock is not resent", async () => {
    // A timer may fire a millisecond before Date.now() reaches the deadline (CI under load did): the
    // one attempt still had the whole deadline, so the call is not sent again.
    const seen: string[] = [];
    const bus = {
      async request(subject: string, env: Envelope) {
        seen.push(env.id);
        throw new BusUnavailable(subject, "timeout");
      },
    } as unknown as Bus;
    const env = envelope("registry.import", null, {}, Date.now() + 10_000);
    await expect(requestWithRetry(bus, "registry", env, { sleep: noSleep })).rejects.toThrow(BusUnavailable);
    expect(seen).toHaveLength(1);
  });

  it("gives up with the last failure when the deadline passes, never later than one attempt past it", async () => {
    const { bus, seen } = scripted(["lost"]);
    const deadline = Date.now() + 100;
    const env = envelope("engine.claim", null, {}, deadline);
    await expect(
      requestWithRetry(bus, "engine.p3", env, { attemptMs: 30, sleep: noSleep }),
    ).rejects.toMatchObject({ reason: "timeout" });
    expect(seen.length).toBeGreaterThan(1);
    // Every attempt's wait fits in what was left of the deadline when it was sent.
    expect(seen.every((s) => s.timeoutMs <= 30)).toBe(true);
  });

  it("does not resend a failure no retry can help", async () => {
    const { bus, seen } = scripted(["fatal", { value: "never" }]);
    const deadline = Date.now() + 10_000;
    const env = envelope("engine.claim", null, {}, deadline);
    await expect(requestWithRetry(bus, "engine.p3", env, { attemptMs: 20, sleep: noSleep })).rejects.toThrow(
      BusRemoteError,
    );
    expect(seen).toHaveLength(1);
  });
});

describe("InProcessBus: an envelope sent again while it is handled is handled once", () => {
  it("joins the handling under way instead of starting it twice", async () => {
    const bus = new InProcessBus();
    let handled = 0;
    let finish: (v: string) => void = () => undefined;
    bus.serve("slow", async () => {
      handled++;
      return new Promise<string>((resolve) => {
        finish = resolve;
      });
    });
    const deadline = Date.now() + 10_000;
    const env = envelope("slow", null, {}, deadline);
    const answered = requestWithRetry(bus, "slow", env, { attemptMs: 10, sleep: noSleep });
    await new Promise((r) => setTimeout(r, 50)); // several attempts time out meanwhile
    finish("done");
    expect(await answered).toBe("done");
    expect(handled).toBe(1);
    // A new envelope is a new call.
    const second = requestWithRetry(bus, "slow", envelope("slow", null, {}, deadline));
    await new Promise((r) => setTimeout(r, 10));
    finish("again");
    expect(await second).toBe("again");
    expect(handled).toBe(2);
    await bus.close();
  });
});
