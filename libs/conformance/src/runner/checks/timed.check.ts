import { afterAll, beforeAll, beforeEach, describe } from "vitest";
import { timedDueScenarios } from "../../scenarios/timed/due.ts";
import { timedEventScenarios } from "../../scenarios/timed/events.ts";
import { timedLeaseScenarios } from "../../scenarios/timed/leases.ts";
import { timedWaitScenarios } from "../../scenarios/timed/waits.ts";
import { TIMED_PUBLICATIONS } from "../../scenarios/timed/walks.ts";
import { Harness } from "../../support.ts";
import { runnerConfig, runnerTarget } from "../target.ts";

/** Why a timed check did not run: the server's time cannot be moved. */
const NO_CLOCK =
  "moves time: needs the server's manual clock, and the runner moves only Baton's (--clock baton against baton dev --clock manual)";

/**
 * The runner's timed checks: the scenarios of test/conformance/timed.test.ts. Without `--clock baton`
 * every one is skipped with {@link NO_CLOCK}, never passed.
 */
describe("timed conformance", () => {
  const clock = runnerConfig().clock !== null;
  const h = new Harness(runnerTarget);
  beforeAll(() => (clock ? h.setup(TIMED_PUBLICATIONS) : undefined), 600_000);
  afterAll(() => (clock ? h.teardown() : undefined), 120_000);
  beforeEach((context) => {
    if (!clock) context.skip(NO_CLOCK);
  });

  timedWaitScenarios(h);
  timedEventScenarios(h);
  timedDueScenarios(h);
  timedLeaseScenarios(h);
});
