import { afterAll, beforeAll, describe } from "vitest";
import { DEPLOYMENTS } from "../support/deploy.ts";
import { agentLoopScenarios } from "./scenarios/agent-loop.ts";
import { discoveryScenarios } from "./scenarios/discovery.ts";
import { endingScenarios } from "./scenarios/ending.ts";
import { eventScenarios } from "./scenarios/events.ts";
import { evidenceScenarios } from "./scenarios/evidence.ts";
import { fieldScenarios } from "./scenarios/fields.ts";
import { peopleScenarios } from "./scenarios/people.ts";
import { publicationScenarios } from "./scenarios/publication.ts";
import { readScenarios } from "./scenarios/reads.ts";
import { requestScenarios } from "./scenarios/requests.ts";
import { routeScenarios } from "./scenarios/routes.ts";
import { runDataScenarios } from "./scenarios/run-data.ts";
import { Harness } from "./support.ts";

/**
 * The conformance suite without timers (issues #4, #9): every scenario of `CONFORMANCE-CHECKLIST.md`
 * that needs neither a movable clock nor a profile, and every error of every tool, replayed over a
 * real MCP client (every response validated against the official JSON Schemas) against `baton dev`
 * and against the services on NATS and PostgreSQL. Each deployment starts once for the whole file.
 * The scenarios are grouped by tool and specification section; each test names in brackets the
 * checklist items and tool errors it proves (docs/conformance-matrix.md), then its sections.
 */
describe.each(DEPLOYMENTS)("conformance — %s", (_label, start) => {
  const h = new Harness(start);
  beforeAll(() => h.setup(), 240_000);
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
});
