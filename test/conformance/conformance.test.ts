import { afterAll, beforeAll, describe } from "vitest";
import { startDistributed, startEmbedded } from "../support/deploy.ts";
import { startScriptedEvaluator } from "../support/evaluator.ts";
import { agentLoopScenarios } from "./scenarios/agent-loop.ts";
import { checkScenarios } from "./scenarios/check.ts";
import { discoveryScenarios } from "./scenarios/discovery.ts";
import { endingScenarios } from "./scenarios/ending.ts";
import { eventScenarios } from "./scenarios/events.ts";
import { evidenceScenarios } from "./scenarios/evidence.ts";
import { fieldScenarios } from "./scenarios/fields.ts";
import { parallelScenarios } from "./scenarios/parallel.ts";
import { peopleScenarios } from "./scenarios/people.ts";
import { publicationScenarios } from "./scenarios/publication.ts";
import { readScenarios } from "./scenarios/reads.ts";
import { requestScenarios } from "./scenarios/requests.ts";
import { routeScenarios } from "./scenarios/routes.ts";
import { runDataScenarios } from "./scenarios/run-data.ts";
import { Harness } from "./support.ts";

/**
 * Both deployments, each configured with a check evaluator this file starts: a real HTTP server
 * speaking the OpenAI chat-completions format that answers from the scenarios' scripts
 * (`test/support/evaluator.ts`), so the server offers `check-1` as well as `parallel-1`.
 */
const RUNNERS = [
  ["embedded (baton dev)", (env: Record<string, string>) => startEmbedded({ env })],
  [
    "distributed (baton serve over NATS and PostgreSQL)",
    (env: Record<string, string>) => startDistributed({ env }),
  ],
] as const;

/**
 * The conformance suite without timers (issues #4, #9, #14): every scenario of
 * `CONFORMANCE-CHECKLIST.md` that needs no movable clock, the profiles' scenarios (`parallel-1`,
 * and `check-1` against a scripted evaluator), and every error of every tool, replayed over a real
 * MCP client (every response validated against the official JSON Schemas) against `baton dev` and
 * against the services on NATS and PostgreSQL. Each deployment starts once for the whole file. The
 * scenarios are grouped by tool and specification section; each test names in brackets the
 * checklist items and tool errors it proves (docs/conformance-matrix.md), then its sections.
 */
describe.each(RUNNERS)("conformance — %s", (_label, start) => {
  const h = new Harness(async () => {
    const evaluator = await startScriptedEvaluator();
    const baton = await start(evaluator.env);
    return {
      ...baton,
      evaluator,
      async stop() {
        await baton.stop();
        await evaluator.stop();
      },
    };
  });
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
  parallelScenarios(h);
  checkScenarios(h);
});
