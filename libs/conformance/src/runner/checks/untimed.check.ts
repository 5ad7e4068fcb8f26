import { afterAll, beforeAll, describe } from "vitest";
import { agentLoopScenarios } from "../../scenarios/agent-loop.ts";
import { checkScenarios } from "../../scenarios/check.ts";
import { discoveryScenarios } from "../../scenarios/discovery.ts";
import { endingScenarios } from "../../scenarios/ending.ts";
import { eventScenarios } from "../../scenarios/events.ts";
import { evidenceScenarios } from "../../scenarios/evidence.ts";
import { fieldScenarios } from "../../scenarios/fields.ts";
import { parallelScenarios } from "../../scenarios/parallel.ts";
import { peopleScenarios } from "../../scenarios/people.ts";
import { publicationScenarios } from "../../scenarios/publication.ts";
import { readScenarios } from "../../scenarios/reads.ts";
import { requestScenarios } from "../../scenarios/requests.ts";
import { routeScenarios } from "../../scenarios/routes.ts";
import { runDataScenarios } from "../../scenarios/run-data.ts";
import { Harness } from "../../support.ts";
import { runnerTarget } from "../target.ts";

/**
 * The runner's untimed checks (`baton conformance`): the very scenarios Baton's own suite runs
 * (test/conformance/conformance.test.ts), against the server the runner was pointed at.
 */
describe("conformance", () => {
  const h = new Harness(runnerTarget);
  beforeAll(() => h.setup(), 600_000);
  afterAll(() => h.teardown(), 120_000);

  discoveryScenarios(h);
  publicationScenarios(h);
  fieldScenarios(h);
  routeScenarios(h);
  runDataScenarios(h);
  agentLoopScenarios(h);
  peopleScenarios(h);
  endingScenarios(h);
  eventScenarios(h);
  evidenceScenarios(h);
  requestScenarios(h);
  readScenarios(h);
  parallelScenarios(h);
  checkScenarios(h);
});
