import { afterAll, beforeAll, describe } from "vitest";
import { DEPLOYMENTS } from "../support/deploy.ts";
import { deliverScenarios } from "./deliver.ts";
import { divergenceScenarios } from "./divergences.ts";
import { round1Scenarios } from "./round1.ts";
import { round2Scenarios } from "./round2.ts";
import { round3Scenarios } from "./round3.ts";
import { Harness } from "./support.ts";

/**
 * Issue #4's conformance suite: every scenario of `CONFORMANCE-CHECKLIST.md` that needs neither
 * timers nor a profile, and one scenario per numbered point of the issue's Deliver list, replayed
 * over a real MCP client (every response validated against the official JSON Schemas) against
 * `baton dev` and against the services on NATS and PostgreSQL. Each deployment starts once for the
 * whole file; each test names its checklist item or specification section.
 */
describe.each(DEPLOYMENTS)("conformance — %s", (_label, start) => {
  const h = new Harness(start);
  beforeAll(() => h.setup(), 240_000);
  afterAll(() => h.teardown(), 120_000);

  round1Scenarios(h);
  round2Scenarios(h);
  round3Scenarios(h);
  divergenceScenarios(h);
  deliverScenarios(h);
});
