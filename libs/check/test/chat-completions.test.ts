import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  apply,
  type CommandContext,
  type Outcome,
  type PublishedProcess,
  type Run,
  startRun,
} from "@baton/engine";
import { parseProcess } from "@baton/process";
import type { CheckAnswers, CheckRequest, Identity } from "@baton/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { answerRequest, ChatCompletionsEvaluator, type ChatCompletionsSettings } from "../src/index.ts";

/**
 * The evaluator against a real HTTP server this test starts, speaking the OpenAI chat-completions
 * format and answering from a script (profiles/check.md §2–§3): pass, fail, unsure, malformed, slow,
 * down, a transient failure retried once, and the concurrency limit. The answers go through the
 * engine's core exactly as the shell will hand them over, on the `vendor-check` fixture.
 */

// ---- A scripted chat-completions server ------------------------------------------------------

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: {
    model: string;
    messages: { role: string; content: string }[];
    response_format: { type: string; json_schema: { name: string; strict: boolean; schema: unknown } };
  };
}

/** What the server does with one request: answer with content, an HTTP error, or never answer. */
type Reply = { content: string } | { status: number; text: string } | { refusal: string } | "hang";

/** Replies by question (matched on its `ask` in the system message), one per attempt; the last repeats. */
type Script = Record<string, Reply[]>;

const json = (answer: unknown): Reply => ({ content: JSON.stringify(answer) });

class ScriptedServer {
  readonly seen: Seen[] = [];
  /** Requests not answered (yet): held, or scripted to hang. */
  readonly hanging: { res: ServerResponse; body: Seen["body"] }[] = [];
  private readonly attempts = new Map<string, number>();
  private readonly server: Server;
  /** Set to hold every request until released (the concurrency test). */
  hold = false;

  constructor(private readonly script: Script) {
    this.server = createServer((req, res) => {
      let raw = "";
      req.on("data", (chunk) => {
        raw += chunk;
      });
      req.on("end", () => {
        const body = JSON.parse(raw) as Seen["body"];
        this.seen.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
        if (this.hold) {
          this.hanging.push({ res, body });
          return;
        }
        this.reply(body, res);
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Which scripted question a request asks. */
  askOf(body: Seen["body"]): string {
    const system = body.messages.find((m) => m.role === "system")?.content ?? "";
    const ask = Object.keys(this.script).find((a) => system.includes(a));
    if (!ask) throw new Error(`unscripted question in: ${system}`);
    return ask;
  }

  reply(body: Seen["body"], res: ServerResponse): void {
    const ask = this.askOf(body);
    const n = this.attempts.get(ask) ?? 0;
    this.attempts.set(ask, n + 1);
    const replies = this.script[ask] ?? [];
    const reply = replies[Math.min(n, replies.length - 1)];
    if (reply === undefined || reply === "hang") {
      this.hanging.push({ res, body });
      return;
    }
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "text/plain" }).end(reply.text);
      return;
    }
    const message =
      "refusal" in reply
        ? { role: "assistant", content: null, refusal: reply.refusal }
        : { role: "assistant", content: reply.content, refusal: null };
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: `chatcmpl-${this.seen.length}`,
        object: "chat.completion",
        created: 1_790_000_000,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: "stop" }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      }),
    );
  }

  /** Answers the oldest held request from the script. */
  releaseOne(): void {
    const held = this.hanging.shift();
    if (!held) throw new Error("nothing held");
    this.reply(held.body, held.res);
  }

  attemptsOf(ask: string): number {
    return this.seen.filter((s) => this.askOf(s.body) === ask).length;
  }
}

async function until(what: string, condition: () => boolean, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// ---- The vendor-check fixture through the core -------------------------------------------------

const source = readFileSync(
  new URL("../../../conformance/fixtures/vendor-check/PROCESS.md", import.meta.url),
  "utf8",
);
const parsed = parseProcess(source, { folderName: "vendor-check" });
if (!parsed.ok) throw new Error("vendor-check does not parse");
const VENDOR: PublishedProcess = {
  org: "acme",
  name: "vendor-check",
  version: 1,
  contentHash: parsed.process.contentHash,
  process: parsed.process,
  bindings: { "finance-approver": "finance-approver" },
};
const YES_NO = "The cleared verdict matches what the attached report says.";
const CHOICE = "What does the summary do?";
const RUBRIC = "How complete is the screening?";
const screener: Identity = { org: "acme", kind: "agent", id: "a_screener", groups: [], operator: false };
const mira: Identity = { org: "acme", kind: "person", id: "mira@example.com", groups: [], operator: false };
const T0 = Date.UTC(2026, 9, 6, 9, 0, 0);
const KEY = "sk-test-secret-0123456789";

function ctx(actor: Identity, now: number): CommandContext {
  return {
    actor,
    now,
    def: VENDOR,
    config: { leaseMs: 600_000, runDataBytes: 262_144, operatorGroup: "operators" },
    files: new Map([["f_report", { status: "ok", sha256: "4f1c" }]]),
  };
}

/** A run with check_vendor claimed, and the submit command the agent sends. */
function claimed(): { run: Run; submit: Parameters<typeof apply>[1] } {
  const started = startRun(
    { runId: "r_check", inputs: { vendorName: "Acme", amount: 48000 }, mode: "live" },
    ctx(mira, T0),
  );
  if (!("run" in started)) throw new Error("start refused");
  const claim = apply(started.run, { type: "claim", stepId: "check_vendor" }, ctx(screener, T0));
  if (claim.value?.kind !== "claim") throw new Error("claim refused");
  return {
    run: claim.run,
    submit: {
      type: "submit",
      claimId: claim.value.claimId,
      output: { cleared: true, summary: "Cleared on OFAC and EU." },
      evidence: [{ kind: "file", ref: "f_report" }],
      summary: "Searched both lists by legal name. No hits. Report attached.",
      next: "approve",
      reason: "Vendor is cleared.",
    },
  };
}

/** The shell's two phases: the core's request, the evaluator's answers, the same command with them. */
async function submitThroughCheck(
  evaluator: ChatCompletionsEvaluator,
): Promise<{ request: CheckRequest; answers: CheckAnswers; outcome: Outcome }> {
  const { run, submit } = claimed();
  const first = apply(run, submit, ctx(screener, T0 + 60_000));
  const request = first.needsCheck;
  if (!request) throw new Error("the core did not ask for a check");
  const answers = await answerRequest(evaluator, request);
  const outcome = apply(run, { ...submit, check: answers } as typeof submit, ctx(screener, T0 + 60_000));
  return { request, answers, outcome };
}

// ---- Tests -------------------------------------------------------------------------------------

let server: ScriptedServer | null = null;

async function evaluatorFor(script: Script, settings: Partial<ChatCompletionsSettings> = {}) {
  server = new ScriptedServer(script);
  const url = await server.start();
  return {
    server,
    evaluator: new ChatCompletionsEvaluator({
      url,
      apiKey: KEY,
      model: "scripted-gpt",
      timeoutMs: 20_000,
      concurrency: 4,
      ...settings,
    }),
  };
}

afterEach(async () => {
  await server?.stop();
  server = null;
});

const PASSING: Script = {
  [YES_NO]: [json({ answer: 0.97 })],
  [CHOICE]: [json({ answer: "states", confidence: 0.91 })],
  [RUBRIC]: [json({ answer: 2, confidence: 0.9 })],
};

describe("ChatCompletionsEvaluator against a chat-completions server (check.md §2–§3)", () => {
  it("pass: one POST per question to <url>/chat/completions with the bearer key, the material apart from the instructions, the answer shape as a strict JSON Schema", async () => {
    const { server, evaluator } = await evaluatorFor(PASSING);
    const { request, outcome } = await submitThroughCheck(evaluator);
    expect(outcome.error).toBeNull();
    expect(outcome.run.data.steps.check_vendor?.check).toEqual({
      verdict: "pass",
      advisory: false,
      model: "scripted-gpt",
      questions: [
        { ask: YES_NO, kind: "yes_no", answer: 0.97, result: "pass" },
        { ask: CHOICE, kind: "choice", answer: "states", confidence: 0.91, result: "pass" },
        { ask: RUBRIC, kind: "rubric", answer: 2, confidence: 0.9, result: "pass" },
      ],
      at: new Date(T0 + 60_000).toISOString(),
    });
    // Exactly one request per question, nothing else fetched (no file, no link).
    expect(server.seen).toHaveLength(3);
    for (const seen of server.seen) {
      expect(seen.method).toBe("POST");
      expect(seen.path).toBe("/v1/chat/completions");
      expect(seen.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(seen.headers["content-type"]).toBe("application/json");
      expect(seen.body.model).toBe("scripted-gpt");
      expect(seen.body.messages.map((m) => m.role)).toEqual(["system", "user"]);
      expect(seen.body.messages[1]?.content).toBe(JSON.stringify(request.material));
      expect(seen.body.response_format).toMatchObject({ type: "json_schema", json_schema: { strict: true } });
      // Questions cannot see each other: each request carries one question.
      const asks = [YES_NO, CHOICE, RUBRIC].filter((a) => seen.body.messages[0]?.content.includes(a));
      expect(asks).toHaveLength(1);
    }
    const material = JSON.parse(server.seen[0]?.body.messages[1]?.content ?? "{}");
    expect(material.submission.evidence).toEqual([{ kind: "file", ref: "f_report" }]);
    expect(JSON.stringify(material)).not.toContain("url");
  });

  it("fail: the core refuses with the failed questions' lines", async () => {
    const { evaluator } = await evaluatorFor({
      [YES_NO]: [json({ answer: 0.12 })],
      [CHOICE]: [json({ answer: "hedges", confidence: 0.9 })],
      [RUBRIC]: [json({ answer: 2, confidence: 0.9 })],
    });
    const { outcome } = await submitThroughCheck(evaluator);
    expect(outcome.error).toMatchObject({
      code: "not_accepted",
      issues: [`check: ${YES_NO} → no (0.12)`, `check: ${CHOICE} → hedges (0.9)`],
    });
    expect(outcome.run.steps.check_vendor?.handoff?.check?.verdict).toBe("fail");
  });

  it("unsure: the core escalates the step with the verdict and the candidate", async () => {
    const { evaluator } = await evaluatorFor({
      ...PASSING,
      [CHOICE]: [json({ answer: "unclear", confidence: 0.95 })],
    });
    const { outcome } = await submitThroughCheck(evaluator);
    expect(outcome.error).toBeNull();
    expect(outcome.run.steps.check_vendor?.state).toBe("waiting");
    expect(outcome.run.workItems).toHaveLength(1);
    expect(outcome.run.steps.check_vendor?.escalation).toMatchObject({
      check: { verdict: "unsure", model: "scripted-gpt" },
      candidate: { output: { cleared: true, summary: "Cleared on OFAC and EU." } },
    });
  });

  it("malformed: an answer outside the schema is never accepted; the question is asked twice, then the core answers retry", async () => {
    const { server, evaluator } = await evaluatorFor({
      ...PASSING,
      [YES_NO]: [json({ answer: 0.9, why: "the report says so" }), { content: "Yes, it matches." }],
    });
    const { outcome } = await submitThroughCheck(evaluator);
    expect(outcome.error?.code).toBe("retry");
    expect(outcome.changed).toBe(false);
    expect(server.attemptsOf(YES_NO)).toBe(2);
    expect(server.attemptsOf(CHOICE)).toBe(1);
  });

  it("a refusal by the model counts as no answer", async () => {
    const { evaluator } = await evaluatorFor({
      ...PASSING,
      [RUBRIC]: [{ refusal: "I can't help with that." }],
    });
    const { answers, outcome } = await submitThroughCheck(evaluator);
    expect(answers).toMatchObject({ error: expect.stringContaining("the model refused") });
    expect(outcome.error?.code).toBe("retry");
  });

  it("slow: a request past the time-out is abandoned, retried once, then error; the core answers retry", async () => {
    const { server, evaluator } = await evaluatorFor({ ...PASSING, [RUBRIC]: ["hang"] }, { timeoutMs: 250 });
    const { answers, outcome } = await submitThroughCheck(evaluator);
    expect(outcome.error?.code).toBe("retry");
    expect(server.attemptsOf(RUBRIC)).toBe(2);
    expect("error" in answers && answers.error).toContain("gave no answer within 250 ms");
  });

  it("down: nothing listening is an error after one retry, and says where", async () => {
    const { server, evaluator } = await evaluatorFor(PASSING);
    await server.stop();
    const { answers, outcome } = await submitThroughCheck(evaluator);
    expect(outcome.error?.code).toBe("retry");
    expect("error" in answers && answers.error).toContain("could not be reached");
    expect(JSON.stringify(answers)).not.toContain(KEY);
  });

  it("a transient failure (HTTP 503) is retried once and then answered", async () => {
    const { server, evaluator } = await evaluatorFor({
      ...PASSING,
      [YES_NO]: [{ status: 503, text: "overloaded" }, json({ answer: 0.97 })],
    });
    const { outcome } = await submitThroughCheck(evaluator);
    expect(outcome.error).toBeNull();
    expect(server.attemptsOf(YES_NO)).toBe(2);
  });

  it("an HTTP error names the status and never the key", async () => {
    const { evaluator } = await evaluatorFor({
      ...PASSING,
      [CHOICE]: [{ status: 401, text: "invalid api key" }],
    });
    const { answers } = await submitThroughCheck(evaluator);
    expect("error" in answers && answers.error).toContain("answered HTTP 401");
    expect(JSON.stringify(answers)).not.toContain(KEY);
  });

  it("no more requests in flight than the concurrency limit; the rest wait their turn", async () => {
    const { server, evaluator } = await evaluatorFor(PASSING, { concurrency: 2 });
    server.hold = true;
    const { run, submit } = claimed();
    const request = apply(run, submit, ctx(screener, T0)).needsCheck as CheckRequest;
    const answering = answerRequest(evaluator, request);
    await until("two requests held", () => server.hanging.length === 2);
    expect(server.seen).toHaveLength(2);
    server.releaseOne();
    await until("the third request", () => server.seen.length === 3);
    expect(server.hanging).toHaveLength(2);
    server.releaseOne();
    server.releaseOne();
    const answers = await answering;
    expect("answers" in answers && answers.answers).toHaveLength(3);
    expect(server.seen).toHaveLength(3);
  });
});
