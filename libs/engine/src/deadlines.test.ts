import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agent, published, Sim, T0 } from "./test-support.ts";

/**
 * Issue #8 part 3: a deadline never fires before its instant (§2.2 `wait_until`: the run continues
 * when the clock reaches the datetime; docs/decisions.md "A deadline never fires early"). Baton keeps
 * time in whole milliseconds, so an instant written with sub-millisecond digits is rounded toward
 * later: the wait ends at the first millisecond at or after its instant, never at the one before.
 */

const HOLD = published("hold", [
  "inputs:",
  "  at: datetime",
  "steps:",
  "  - id: hold",
  "    wait_until: inputs.at",
  "  - id: work",
  "    agent: Carry on.",
  "  - id: done",
  "    finish: ok",
]);

const a1 = agent("a_one");
const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/**
 * RFC 3339 of epoch ms `ms` plus `extra` further fraction digits, written at `offset` minutes east
 * of UTC: the instant is `ms + 0.<extra>` ms exactly.
 */
function rfc3339(ms: number, extra: string, offset: number): string {
  const local = new Date(ms + offset * 60_000);
  const abs = Math.abs(offset);
  const zone = offset === 0 ? "Z" : `${offset < 0 ? "-" : "+"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  return (
    `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}` +
    `T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
    `.${pad(local.getUTCMilliseconds(), 3)}${extra}${zone}`
  );
}

/** The `at` the wait recorded (epoch ms), or null while it has not ended. */
const endedAt = (sim: Sim): number | null => {
  const at = sim.view().data.steps.hold?.at;
  return typeof at === "string" ? Date.parse(at) : null;
};

describe("§2.2 wait_until: a deadline never fires before its instant (issue #8)", () => {
  it("§2.2 issue #8 case: a wait_until on …00.9565Z is still waiting at …00.956Z and ends at …00.957Z", () => {
    const instant = Date.UTC(2026, 11, 1, 10, 0, 0, 956);
    const sim = Sim.start(HOLD, a1, { at: "2026-12-01T10:00:00.9565Z" }, { now: instant - 60_000 });
    sim.advance(60_000).tick();
    expect(sim.states().hold).toBe("waiting");
    sim.advance(1).tick();
    expect(sim.states().hold).toBe("done");
    expect(sim.view().data.steps.hold?.at).toBe("2026-12-01T10:00:00.957Z");
  });

  it("§2.2 issue #8 case: a run started at …00.956Z on that instant waits; it does not continue at once", () => {
    const instant = Date.UTC(2026, 11, 1, 10, 0, 0, 956);
    const sim = Sim.start(HOLD, a1, { at: "2026-12-01T10:00:00.9565Z" }, { now: instant });
    expect(sim.states().hold).toBe("waiting");
  });

  it("§2.2 any instant with sub-millisecond digits, at any offset: never ended before it, always ended at the first millisecond after", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: T0 - 400 * 86_400_000, max: T0 + 400 * 86_400_000 }),
        fc.stringMatching(/^[0-9]{1,9}$/),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        fc.integer({ min: 0, max: 4 }),
        (ms, extra, offset, early) => {
          const text = rfc3339(ms, extra, offset);
          // The instant is ms + 0.<extra> ms: after ms itself unless every extra digit is 0.
          const past = /[1-9]/.test(extra);
          const first = past ? ms + 1 : ms; // the first whole millisecond at or after the instant
          const sim = Sim.start(HOLD, a1, { at: text }, { now: first - 1 - early });
          for (let t = first - 1 - early; t < first; t++) {
            sim.now = t;
            sim.tick();
            expect(endedAt(sim), `${text} ended at ${new Date(t).toISOString()}`).toBeNull();
          }
          sim.now = first;
          sim.tick();
          expect(endedAt(sim), `${text} still waiting at ${new Date(first).toISOString()}`).toBe(first);
        },
      ),
      { seed: 20261201, numRuns: 500 },
    );
  });
});
