import { describe, expect, it } from "vitest";
import { SUPPLIER } from "../../../libs/engine/src/test-processes.ts";
import { operator, person, Sim } from "../../../libs/engine/src/test-support.ts";
import { RunCache } from "./run-cache.ts";
import type { EngineStore } from "./store.ts";

/**
 * The engine's hot runs (ARCHITECTURE rule 5): a run that ended or was cancelled is not kept, since
 * nothing changes it again (§3.5: every write but a replay is `conflict` `run_ended`), and keeping
 * thousands of finished runs kept the garbage collector busy (issue #15).
 * `remember` and `peek` never touch the store, so none is given.
 */
const noStore = null as unknown as EngineStore;

describe("RunCache (issue #15)", () => {
  it("keeps an active run, and drops it once it is cancelled", () => {
    const cache = new RunCache(noStore);
    const sim = Sim.start(SUPPLIER, person("mira@example.com"), { vendorName: "Acme", amount: 48000 });
    cache.remember(sim.run);
    expect(cache.peek(sim.run.id)?.state).toBe("active");
    sim.ok(operator(), { type: "cancel", reason: "Stop." });
    expect(sim.run.state).toBe("cancelled");
    cache.remember(sim.run);
    expect(cache.peek(sim.run.id)).toBeUndefined();
  });

  it("never holds an ended run, nor more than its size", () => {
    const cache = new RunCache(noStore, 2);
    const runs = ["r_1", "r_2", "r_3"].map(
      (runId) =>
        Sim.start(SUPPLIER, person("mira@example.com"), { vendorName: "Acme", amount: 1 }, { runId }).run,
    );
    for (const run of runs) cache.remember(run);
    expect(runs.map((r) => cache.peek(r.id) !== undefined)).toEqual([false, true, true]);
    const ended = { ...(runs[2] as (typeof runs)[number]), state: "ended" as const };
    cache.remember(ended);
    expect(cache.peek(ended.id)).toBeUndefined();
    expect(cache.peek("r_2")?.state).toBe("active");
  });
});
