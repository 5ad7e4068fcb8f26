import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { agentLoopScenarios } from "@baton/conformance/scenarios/agent-loop";
import { checkScenarios } from "@baton/conformance/scenarios/check";
import { discoveryScenarios } from "@baton/conformance/scenarios/discovery";
import { endingScenarios } from "@baton/conformance/scenarios/ending";
import { eventScenarios } from "@baton/conformance/scenarios/events";
import { evidenceScenarios } from "@baton/conformance/scenarios/evidence";
import { fieldScenarios } from "@baton/conformance/scenarios/fields";
import { parallelScenarios } from "@baton/conformance/scenarios/parallel";
import { peopleScenarios } from "@baton/conformance/scenarios/people";
import { publicationScenarios } from "@baton/conformance/scenarios/publication";
import { readScenarios } from "@baton/conformance/scenarios/reads";
import { requestScenarios } from "@baton/conformance/scenarios/requests";
import { routeScenarios } from "@baton/conformance/scenarios/routes";
import { runDataScenarios } from "@baton/conformance/scenarios/run-data";
import { type Data, Harness, rid, stateOf, suiteProcess } from "@baton/conformance/support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployment, REPO, startDistributed, startEmbedded } from "../support/deploy.ts";
import { startScriptedEvaluator } from "../support/evaluator.ts";

const run = promisify(execFile);
const CLI = join(REPO, "services/cli/src/main.ts");

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
  let baton: Deployment;
  const h = new Harness(async () => {
    const evaluator = await startScriptedEvaluator();
    baton = await start(evaluator.env);
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

  describe("Baton's check agreement report and journal (issue #14; not part of the protocol)", () => {
    it("baton report checks: a scripted history of advisory verdicts and an editor's decisions gives exactly the counts written here by hand; operators only; the journal holds the evaluator's answers (check.md §4 earn trust first; docs/check-report.md)", async () => {
      const org = "org-report";
      await h.publish(suiteProcess("advisory-draft"), { editor: "editor" }, org);
      const agent = await h.agent("a_reporter", org);
      const editor = await h.person("edna@example.com", ["editor"], { org });
      const start = async () =>
        (await agent.ok("start_run", { process: "advisory-draft", inputs: { topic: "pricing" } })).run
          .id as string;
      /** One draft of `runId`, its two questions answered as given (or the evaluator down). */
      const draft = async (runId: string, answers: [number, string, number] | "down") => {
        const m = `report-${rid().slice(0, 8)}`;
        h.evaluator.script(
          m,
          answers === "down"
            ? { "states the date": ["down"], "tone of the announcement": ["down"] }
            : {
                "states the date": [{ json: { answer: answers[0] } }],
                "tone of the announcement": [{ json: { answer: answers[1], confidence: answers[2] } }],
              },
        );
        const claim = await h.claim(agent, runId, "draft");
        const view = await agent.ok("submit", {
          token: claim.token,
          output: { text: "Prices change on 1 November." },
          summary: `Drafted. [script:${m}]`,
        });
        expect(stateOf(view, "draft")).toBe("done");
        return view;
      };
      const decide = (runId: string, decision: "approved" | "rejected") =>
        h.decided(editor, runId, "review", decision, decision === "rejected" ? { note: "Say when." } : {});
      const PASS: [number, string, number] = [0.95, "plain", 0.9];
      const FAIL: [number, string, number] = [0.2, "plain", 0.9];
      const UNSURE: [number, string, number] = [0.95, "plain", 0.5];

      // A: pass, approved. B: fail, rejected; pass, approved. C: pass, rejected; fail, approved.
      // D: unsure (the tone answered with low confidence), approved. E: error, rejected; pass, not decided yet.
      const a = await start();
      await draft(a, PASS);
      await decide(a, "approved");
      const b = await start();
      await draft(b, FAIL);
      await decide(b, "rejected");
      await draft(b, PASS);
      await decide(b, "approved");
      const c = await start();
      await draft(c, PASS);
      await decide(c, "rejected");
      await draft(c, FAIL);
      await decide(c, "approved");
      const d = await start();
      await draft(d, UNSURE);
      await decide(d, "approved");
      const e = await start();
      await draft(e, "down");
      await decide(e, "rejected");
      await draft(e, PASS);
      // A test run is practice, not evidence: it is left out.
      const practice = (
        await agent.ok("start_run", { process: "advisory-draft", inputs: { topic: "x" }, mode: "test" })
      ).run.id as string;
      await draft(practice, FAIL);

      const base = baton.url.replace(/\/mcp$/, "");
      const operator = await baton.token({ kind: "person", id: "ops@example.com", operator: true, org });
      const cli = async (...args: string[]) =>
        (
          await run(
            process.execPath,
            ["--import", "tsx", CLI, "report", "checks", "advisory-draft", ...args],
            {
              cwd: REPO,
              env: { ...process.env, BATON_TOKEN: "" },
            },
          )
        ).stdout;
      const report = JSON.parse(await cli("--url", base, "--token", operator, "--json"));
      const none = { approved: 0, rejected: 0, undecided: 0 };
      const disagreement = (verdict: string, decision: string) => ({
        runId: c,
        verdict,
        decision,
        decidedOn: "review",
        decidedBy: "edna@example.com",
        checkedAt: expect.any(String),
        decidedAt: expect.any(String),
        advisory: true,
      });
      expect(report).toEqual({
        process: "advisory-draft",
        since: null,
        runs: 5,
        steps: [
          {
            stepId: "draft",
            verdicts: 8,
            decided: 7,
            agree: 3,
            disagree: 2,
            agreement: 0.6,
            byVerdict: {
              pass: { approved: 2, rejected: 1, undecided: 1 },
              fail: { approved: 1, rejected: 1, undecided: 0 },
              unsure: { approved: 1, rejected: 0, undecided: 0 },
              error: { approved: 0, rejected: 1, undecided: 0 },
            },
            questions: [
              {
                ask: "The announcement states the date of the change.",
                kind: "yes_no",
                results: {
                  pass: { approved: 3, rejected: 1, undecided: 1 },
                  fail: { approved: 1, rejected: 1, undecided: 0 },
                  unsure: none,
                },
                agree: 4,
                disagree: 2,
                agreement: 4 / 6,
              },
              {
                ask: "What is the tone of the announcement?",
                kind: "choice",
                results: {
                  pass: { approved: 3, rejected: 2, undecided: 1 },
                  fail: none,
                  unsure: { approved: 1, rejected: 0, undecided: 0 },
                },
                agree: 3,
                disagree: 2,
                agreement: 0.6,
              },
            ],
            disagreements: [disagreement("pass", "rejected"), disagreement("fail", "approved")],
          },
        ],
      });
      const text = await cli("--url", base, "--token", operator);
      expect(text).toContain("advisory-draft: 5 live runs read");
      expect(text).toContain(
        "step draft: 8 verdicts, 7 followed by a decision; agreement 60% (3 agree, 2 disagree)",
      );
      expect(text).toContain(`${c}: pass then rejected on review by edna@example.com`);

      // Verdicts recorded from a later moment on: none yet.
      const later = new Date(Date.now() + 60_000).toISOString();
      const since = JSON.parse(await cli("--url", base, "--token", operator, "--json", "--since", later));
      expect(since).toMatchObject({ since: later, runs: 0, steps: [] });
      // Operators only; another organization's process is not found.
      const person = await baton.token({ kind: "person", id: "edna@example.com", groups: ["editor"], org });
      const refused = await fetch(`${base}/api/processes/advisory-draft/check-report`, {
        headers: { authorization: `Bearer ${person}` },
      });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as Data).error.code).toBe("forbidden");
      const elsewhere = await baton.token({
        kind: "person",
        id: "ops@example.com",
        operator: true,
        org: "org-none",
      });
      const missing = await fetch(`${base}/api/processes/advisory-draft/check-report`, {
        headers: { authorization: `Bearer ${elsewhere}` },
      });
      expect(missing.status).toBe(404);
      const badSince = await fetch(`${base}/api/processes/advisory-draft/check-report?since=yesterday`, {
        headers: { authorization: `Bearer ${operator}` },
      });
      expect(badSince.status).toBe(400);

      // The journal records the answers the command carried (the core never calls a model; a replay
      // or an audit never asks one again).
      const journal = await fetch(`${base}/api/runs/${a}/journal`, {
        headers: { authorization: `Bearer ${operator}` },
      });
      const entries: Data[] = ((await journal.json()) as Data).data.entries;
      const submit = entries.find((x) => x.command === "submit");
      expect(submit.detail.check).toEqual({
        key: expect.stringMatching(/^[0-9a-f]{64}$/),
        model: h.evaluator.model,
        answers: [{ answer: 0.95 }, { answer: "plain", confidence: 0.9 }],
      });
    });
  });
});
