import { type Evaluator, EvaluatorError } from "@baton/check";
import { createLogger } from "@baton/kit";
import type { CheckAnswer, CheckQuestion, CheckRequest } from "@baton/protocol";
import { describe, expect, it } from "vitest";
import { CheckAsker } from "./checks.ts";

/**
 * The engine shell's side of the check profile (check.md §3): one model call per question and
 * material however often a write is resent while it answers, nothing past the caller's deadline,
 * one retry per question, and `error` without an evaluator. The evaluator here is a model stand-in
 * behind `@baton/check`'s interface (a third party; the real client is tested against a real HTTP
 * server in libs/check and end to end in the conformance suite).
 */

const log = createLogger("test", "error");

function request(key: string): CheckRequest {
  return {
    key,
    runId: "r_1",
    stepId: "draft",
    questions: [
      { kind: "yes_no", ask: "The draft states the date." },
      { kind: "choice", ask: "Tone?", options: { plain: "Plain.", loud: "Loud." } },
    ],
    material: {
      instructions: "Draft it.",
      body: "",
      runData: { inputs: {}, steps: {} },
      truncated: false,
      submission: { output: { text: "x" }, summary: "s", evidence: [] },
    },
  };
}

/** An evaluator that answers when the test says so, counting the questions it was asked. */
class Gate implements Evaluator {
  readonly model = "gate-1";
  asked: string[] = [];
  failures = 0;
  private waiting: (() => void)[] = [];
  constructor(private readonly failFirst = 0) {}
  async answer(question: CheckQuestion): Promise<CheckAnswer> {
    this.asked.push(question.ask);
    if (this.failures < this.failFirst) {
      this.failures++;
      throw new EvaluatorError("unavailable", "connection refused");
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    return question.kind === "yes_no" ? { answer: 0.95 } : { answer: "plain", confidence: 0.9 };
  }
  /** Lets every question asked so far answer. */
  open(): void {
    for (const w of this.waiting.splice(0)) w();
  }
  async untilAsked(n: number): Promise<void> {
    for (let i = 0; i < 1000 && this.asked.length < n; i++) await new Promise((r) => setTimeout(r, 1));
    expect(this.asked.length).toBe(n);
  }
}

describe("CheckAsker (check.md §3; the write path's evaluator calls)", () => {
  it("a request asked again while its answers are on the way (a resent write) waits for the same model calls", async () => {
    const gate = new Gate();
    const asker = new CheckAsker(gate, log);
    const deadline = Date.now() + 60_000;
    const first = asker.answer(request("k1"), deadline);
    const resent = asker.answer(request("k1"), deadline);
    await gate.untilAsked(2);
    gate.open();
    const [a, b] = await Promise.all([first, resent]);
    expect(a).toEqual({
      key: "k1",
      model: "gate-1",
      answers: [{ answer: 0.95 }, { answer: "plain", confidence: 0.9 }],
    });
    expect(b).toEqual(a);
    expect(gate.asked).toEqual(["The draft states the date.", "Tone?"]);
    // Once answered, the same key asks again: the answers are not cached beyond the write.
    const again = asker.answer(request("k1"), deadline);
    await gate.untilAsked(4);
    gate.open();
    await again;
  });

  it("each question that fails is asked once more (the server retries once); other material is asked separately", async () => {
    const gate = new Gate(1);
    const asker = new CheckAsker(gate, log);
    const answered = asker.answer(request("k2"), Date.now() + 60_000);
    await gate.untilAsked(3);
    gate.open();
    expect(await answered).toMatchObject({ key: "k2", answers: [{ answer: 0.95 }, { answer: "plain" }] });
  });

  it("past the caller's deadline nothing is answered (the write answers retry and applies nothing)", async () => {
    const asker = new CheckAsker(new Gate(), log);
    expect(await asker.answer(request("k3"), Date.now() - 1)).toBeNull();
    const gate = new Gate();
    const late = new CheckAsker(gate, log).answer(request("k4"), Date.now() + 20);
    // The evaluator's signal aborts at the deadline; the gate never opens.
    expect(await late).toBeNull();
  });

  it("without an evaluator every request is answered error (a process published while one was configured)", async () => {
    const asker = new CheckAsker(null, log);
    expect(await asker.answer(request("k5"), Date.now() + 60_000)).toEqual({
      key: "k5",
      model: "none",
      error: "no evaluator is configured",
    });
  });
});
