import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type McpSession, withoutUrls } from "../mcp.ts";
import { type Data, type Harness, refused, rid, stateOf, statesOf } from "../support.ts";

/**
 * The check profile (profiles/check.md, `check-1`) over MCP, against the evaluator the server is
 * configured with, scripted by each scenario (`Harness.evaluator`): the `vendor-check` fixture through
 * pass, fail (with the exact issue lines and `handoff.check`), unsure (escalated, then completed by a
 * person with the held candidate, not checked again) and error (each question retried once, then
 * `retry`; the same requestId again goes through); what the evaluator is shown; a person's task
 * checked; advisory verdicts recorded without blocking; and the run's other writes going on while the
 * model answers.
 */

const ASK = {
  cleared: "The cleared verdict matches what the attached report says.",
  summary: "What does the summary do?",
  complete: "How complete is the screening?",
} as const;
/** Script keys: a piece of each question's `ask`. */
const Q = {
  cleared: "The cleared verdict",
  summary: "What does the summary do",
  complete: "How complete",
} as const;
/**
 * Answers that pass every question of vendor-check: a scenario spreads them and scripts only what it
 * tests. (The scripted server's own default would pick the first option of a choice, and options are
 * a map: their order is not the author's once stored.)
 */
const PASSING = {
  [Q.cleared]: [{ json: { answer: 0.97 } }],
  [Q.summary]: [{ json: { answer: "states", confidence: 0.95 } }],
  [Q.complete]: [{ json: { answer: 2, confidence: 0.9 } }],
};
const REPORT = "Screening report: ACME-GMBH searched on OFAC SDN and EU consolidated lists; no match.";

export function checkScenarios(h: Harness): void {
  describe("check profile: verdicts, escalation and the evaluator (check.md §2–§5)", () => {
    /** A fresh script marker; the submission's summary carries it as `[script:<marker>]`. */
    const marker = (what: string) => `${what}-${randomUUID().slice(0, 8)}`;

    /** A vendor-check run with `check_vendor` claimed and the screening report uploaded. */
    async function screening(agentId: string) {
      const agent = await h.agent(agentId);
      const runId = (
        await agent.ok("start_run", {
          process: "vendor-check",
          inputs: { vendorName: "Acme GmbH", amount: 1200 },
        })
      ).run.id as string;
      const file = await h.upload(agent, REPORT, "screening.txt");
      const claim = await h.claim(agent, runId, "check_vendor");
      return { agent, runId, file, claim };
    }

    /** The submission of `check_vendor`, its summary carrying the script marker. */
    const submission = (token: string, fileId: string, m: string, requestId = rid()) => ({
      token,
      output: { cleared: true, summary: "Cleared: no match on the OFAC SDN or EU consolidated lists." },
      evidence: [{ kind: "file", ref: fileId }],
      next: "approve",
      reason: "The vendor is cleared.",
      summary: `Screened Acme GmbH on both lists. [script:${m}]`,
      requestId,
    });

    const finance = () => h.person("fin@example.com", ["finance-approver"]);

    it("vendor-check, pass: the step completes with the verdict in run data (model, every question's answer and result); the approver sees it; the evaluator was asked once per question, shown exactly the material of §2 (check.md §2, §3, §5)", async () => {
      const m = marker("pass");
      h.evaluator.script(m, PASSING);
      const { agent, runId, file, claim } = await screening("a_screen_pass");
      const view = await agent.ok("submit", submission(claim.token, file.id, m));
      expect(statesOf(view)).toMatchObject({ check_vendor: "done", approve: "waiting" });
      const check = view.data.steps.check_vendor.check;
      expect(check).toEqual({
        verdict: "pass",
        advisory: false,
        model: h.evaluator.model,
        questions: [
          { ask: ASK.cleared, kind: "yes_no", answer: 0.97, result: "pass" },
          { ask: ASK.summary, kind: "choice", answer: "states", confidence: 0.95, result: "pass" },
          { ask: ASK.complete, kind: "rubric", answer: 2, confidence: 0.9, result: "pass" },
        ],
        at: view.data.steps.check_vendor.at,
      });
      // The approver reads the verdict before deciding (check.md §3).
      const approver = await finance();
      const read = await approver.ok("get_run", { runId });
      expect(read.data.steps.check_vendor.check).toEqual(check);

      // One request per question (§2: questions cannot see each other's answers), each the
      // OpenAI chat-completions call with the answer shape as a strict JSON Schema.
      const seen = h.evaluator.seen(m);
      expect(seen.map((s) => s.ask).sort()).toEqual(Object.values(Q).sort());
      for (const s of seen) {
        expect(s.headers.authorization).toBe("Bearer sk-test-scripted");
        expect(s.body.model).toBe(h.evaluator.model);
        expect(s.body.messages.map((x) => x.role)).toEqual(["system", "user"]);
        const material = JSON.parse(s.body.messages[1]?.content ?? "");
        expect(Object.keys(material).sort()).toEqual([
          "body",
          "instructions",
          "runData",
          "submission",
          "truncated",
        ]);
        expect(material.instructions).toContain("Check the vendor against the OFAC and EU sanctions lists.");
        expect(material.truncated).toBe(false);
        expect(material.runData).toEqual({ inputs: { vendorName: "Acme GmbH", amount: 1200 }, steps: {} });
        expect(material.submission).toEqual({
          output: { cleared: true, summary: "Cleared: no match on the OFAC SDN or EU consolidated lists." },
          summary: `Screened Acme GmbH on both lists. [script:${m}]`,
          evidence: [{ kind: "file", ref: file.id }],
        });
        // It never opens files: no link to the bytes, not their contents (§2, §6).
        expect(s.body.messages[1]?.content).not.toContain(REPORT);
        expect(s.body.messages[1]?.content).not.toContain("url");
      }
      const asked = seen.map((s) => s.body.messages[0]?.content ?? "");
      for (const ask of Object.values(ASK))
        expect(asked.filter((text) => text.includes(ask))).toHaveLength(1);

      const ended = await h.decided(approver, runId, "approve", "approved");
      expect(ended.run).toMatchObject({ state: "ended", outcome: "onboarded" });
      expect(ended.data.steps.check_vendor.check).toEqual(check);
    });

    it("vendor-check, fail: not_accepted with the exact line of the failed question, run data unchanged, the verdict in handoff.check; the same attempt continues with it after an escalation is returned, and passes (check.md §3)", async () => {
      const m = marker("fail");
      h.evaluator.script(m, { ...PASSING, [Q.cleared]: [{ json: { answer: 0.12 } }, { pass: true }] });
      const { agent, runId, file, claim } = await screening("a_screen_fail");
      const line = `check: ${ASK.cleared} → no (0.12)`;
      refused(await agent.call("submit", submission(claim.token, file.id, m)), "not_accepted", [line]);
      const after = await agent.ok("get_run", { runId });
      expect(after.data.steps.check_vendor).toBeUndefined();
      expect(stateOf(after, "check_vendor")).toBe("claimed");

      // The agent asks a person; the operator's item carries the handoff with the verdict and its line.
      const escalated = await agent.ok("escalate", {
        token: claim.token,
        note: "The check disagrees; please look.",
      });
      const item = escalated.workItems.find((w: Data) => w.stepId === "check_vendor");
      expect(item.handoff.issues).toEqual([line]);
      expect(item.handoff.check).toMatchObject({
        verdict: "fail",
        advisory: false,
        model: h.evaluator.model,
        questions: [
          { ask: ASK.cleared, kind: "yes_no", answer: 0.12, result: "fail" },
          { ask: ASK.summary, result: "pass" },
          { ask: ASK.complete, result: "pass" },
        ],
      });
      const operator = await h.operator();
      await h.decided(operator, runId, "check_vendor", "returned", { note: "Re-read the EU list result." });
      const again = await h.claim(agent, runId, "check_vendor");
      expect(again.handoff).toMatchObject({
        issues: [line],
        check: { verdict: "fail" },
        returned: { note: "Re-read the EU list result." },
      });
      const passed = await agent.ok("submit", submission(again.token, file.id, m));
      expect(passed.data.steps.check_vendor.check).toMatchObject({ verdict: "pass" });
      expect(stateOf(passed, "approve")).toBe("waiting");
    });

    it("vendor-check, unsure: the call returns ok, the submission is held as the candidate and escalated with escalation.check and escalation.candidate, the verdict shown in run data; the operator completes it with the candidate and it is not checked again (check.md §3)", async () => {
      const m = marker("unsure");
      h.evaluator.script(m, { ...PASSING, [Q.cleared]: [{ json: { answer: 0.7 } }] });
      const { agent, runId, file, claim } = await screening("a_screen_unsure");
      const sent = submission(claim.token, file.id, m);
      const view = await agent.ok("submit", sent);
      expect(stateOf(view, "check_vendor")).toBe("waiting");
      expect(view.run.state).toBe("waiting");
      const unsure = view.data.steps.check_vendor.check;
      expect(unsure).toMatchObject({
        verdict: "unsure",
        advisory: false,
        questions: [
          { ask: ASK.cleared, answer: 0.7, result: "unsure" },
          { ask: ASK.summary, result: "pass" },
          { ask: ASK.complete, result: "pass" },
        ],
      });
      const item = view.workItems.find((w: Data) => w.stepId === "check_vendor");
      expect(item).toMatchObject({
        kind: "agent",
        assignedTo: { group: "operators" },
        decide: { decisions: ["returned", "completed", "failed"] },
        escalation: {
          by: "a_screen_unsure",
          check: unsure,
          candidate: {
            output: sent.output,
            evidence: [{ kind: "file", ref: file.id }],
            summary: sent.summary,
            next: "approve",
            reason: sent.reason,
          },
        },
      });
      expect(item.escalation.note).toContain(`check: ${ASK.cleared} → no (0.7)`);
      expect(h.evaluator.seen(m)).toHaveLength(3);

      // A person completing an escalated step is not checked again: no question is asked.
      const operator = await h.operator();
      const done = await h.decided(operator, runId, "check_vendor", "completed");
      expect(h.evaluator.seen(m)).toHaveLength(3);
      expect(statesOf(done)).toMatchObject({ check_vendor: "done", approve: "waiting" });
      expect(done.data.steps.check_vendor).toMatchObject({
        output: sent.output,
        next: "approve",
        check: unsure,
        by: "olga@example.com",
      });
      const ended = await h.decided(await finance(), runId, "approve", "approved");
      expect(ended.run).toMatchObject({ state: "ended", outcome: "onboarded" });
    });

    it("vendor-check, error: the evaluator down, malformed, refusing or slow on every question is asked once more, then the agent gets retry with nothing changed; the same requestId again goes through (check.md §3)", async () => {
      const m = marker("error");
      h.evaluator.script(m, {
        [Q.cleared]: ["down", "down", { pass: true }],
        [Q.summary]: [
          { raw: "Yes, it states the verdict." },
          { json: { answer: "maybe", confidence: 0.9 } },
          { json: { answer: "states", confidence: 0.95 } },
        ],
        [Q.complete]: [{ status: 503, text: "overloaded" }, "hang", { pass: true }],
      });
      const { agent, runId, file, claim } = await screening("a_screen_error");
      const sent = submission(claim.token, file.id, m);
      refused(await agent.callOnce("submit", sent), "retry");
      // Each question was asked exactly twice: the first attempt and the one retry.
      const asked = h.evaluator.seen(m).map((s) => s.ask);
      for (const q of Object.values(Q))
        expect(
          asked.filter((a) => a === q),
          q,
        ).toHaveLength(2);
      const unchanged = await agent.ok("get_run", { runId });
      expect(stateOf(unchanged, "check_vendor")).toBe("claimed");
      expect(unchanged.data.steps.check_vendor).toBeUndefined();

      const view = await agent.ok("submit", sent);
      expect(view.data.steps.check_vendor.check).toMatchObject({ verdict: "pass" });
      expect(h.evaluator.seen(m)).toHaveLength(9);
      // A replay of the accepted call returns its result (file URLs signed afresh, §5) and asks no model.
      const replay = await agent.ok("submit", sent);
      expect(withoutUrls(replay.data.steps.check_vendor)).toEqual(withoutUrls(view.data.steps.check_vendor));
      expect(h.evaluator.seen(m)).toHaveLength(9);
    });

    it("the run's other writes go on while the evaluator answers: the check waits outside the run's turn, and its answers apply to the material they were given for (check.md §3; ARCHITECTURE rule 5)", async () => {
      const m = marker("hold");
      h.evaluator.script(m, { ...PASSING, [Q.cleared]: ["hold"] });
      const { agent, runId, file, claim } = await screening("a_screen_hold");
      const submitted = agent.call("submit", submission(claim.token, file.id, m));
      const deadline = Date.now() + 30_000;
      while (h.evaluator.seen(m).length < 3) {
        if (Date.now() > deadline) throw new Error("the evaluator was not asked within 30 s");
        await new Promise((r) => setTimeout(r, 50));
      }
      // The model has not answered yet; another write to the same run is served meanwhile.
      const event = await (await h.agent("a_screen_events")).ok("send_event", {
        runId,
        name: "screening-noted",
        data: { by: "audit" },
      });
      expect(event).toEqual({ consumedBy: null });
      h.evaluator.release(m);
      const result = await submitted;
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(statesOf((result as Data).data)).toMatchObject({ check_vendor: "done", approve: "waiting" });
    });

    it("a person's task is checked when they complete it; an unsure verdict escalates the task to the operators, whose completion is not checked again (check.md §3: a person's task submission gets the same treatment)", async () => {
      const reviewer = await h.person("rev@example.com", ["reviewer"]);
      const operator = await h.operator();
      const run = async () =>
        (await reviewer.ok("start_run", { process: "checked-review", inputs: { incidentId: "INC-7" } })).run
          .id as string;
      const complete = (person: McpSession, runId: string, m: string, extra: Record<string, unknown> = {}) =>
        h.decide(person, runId, "review", "completed", {
          output: { actions: ["Rotate the keys (owner: Sam)"] },
          summary: `Recorded the actions. [script:${m}]`,
          ...extra,
        });

      const failing = marker("task-fail");
      h.evaluator.script(failing, { "Every action item names an owner": [{ json: { answer: 0.2 } }] });
      const failedRun = await run();
      refused(await complete(reviewer, failedRun, failing), "not_accepted", [
        "check: Every action item names an owner. → no (0.2)",
      ]);

      const m = marker("task-unsure");
      h.evaluator.script(m, { "Every action item names an owner": [{ json: { answer: 0.6 } }] });
      const runId = await run();
      const held = await complete(reviewer, runId, m);
      expect(held.ok, JSON.stringify(held)).toBe(true);
      const view = (held as Data).data;
      expect(stateOf(view, "review")).toBe("waiting");
      expect(view.data.steps.review.check).toMatchObject({ verdict: "unsure" });
      const item = view.workItems.find((w: Data) => w.stepId === "review");
      expect(item).toMatchObject({
        kind: "task",
        assignedTo: { group: "operators" },
        decide: { decisions: ["returned", "completed", "failed"] },
        escalation: {
          check: { verdict: "unsure" },
          candidate: { output: { actions: ["Rotate the keys (owner: Sam)"] } },
        },
      });
      expect(h.evaluator.seen(m)).toHaveLength(1);
      const ended = await h.decided(operator, runId, "review", "completed", {
        output: { actions: ["Rotate the keys (owner: Sam Lee)"] },
        summary: "Named the owner in full.",
      });
      expect(h.evaluator.seen(m)).toHaveLength(1);
      expect(ended.run).toMatchObject({ state: "ended", outcome: "reviewed" });
      expect(ended.data.steps.review).toMatchObject({
        output: { actions: ["Rotate the keys (owner: Sam Lee)"] },
        check: { verdict: "unsure" },
      });
    });

    it("advisory: a failed verdict and an evaluator error are recorded in run data and block nothing; the approver decides with them in view (check.md §3 advisory, §4 earn trust first)", async () => {
      const agent = await h.agent("a_advisory");
      const editor = await h.person("edna@example.com", ["editor"]);
      const draft = async (m: string) => {
        const runId = (
          await agent.ok("start_run", { process: "advisory-draft", inputs: { topic: "pricing" } })
        ).run.id as string;
        const claim = await h.claim(agent, runId, "draft");
        const view = await agent.ok("submit", {
          token: claim.token,
          output: { text: "Prices change soon." },
          summary: `Drafted. [script:${m}]`,
        });
        return { runId, view };
      };
      const failing = marker("advisory-fail");
      h.evaluator.script(failing, { "states the date": [{ json: { answer: 0.1 } }] });
      const failed = await draft(failing);
      expect(stateOf(failed.view, "draft")).toBe("done");
      expect(failed.view.data.steps.draft.check).toMatchObject({
        verdict: "fail",
        advisory: true,
        questions: [
          { kind: "yes_no", answer: 0.1, result: "fail" },
          { kind: "choice", answer: "plain", result: "pass" },
        ],
      });
      const reviewItem = await h.workItem(editor, failed.runId, "review");
      expect(reviewItem.kind).toBe("approve");

      const down = marker("advisory-error");
      h.evaluator.script(down, { "states the date": ["down"], "tone of the announcement": ["down"] });
      const errored = await draft(down);
      expect(stateOf(errored.view, "draft")).toBe("done");
      expect(errored.view.data.steps.draft.check).toMatchObject({
        verdict: "error",
        advisory: true,
        model: h.evaluator.model,
        questions: [],
      });
      expect(h.evaluator.seen(down)).toHaveLength(4);
    });
  });
}
