import { describe, expect, it } from "vitest";
import { answerSchema, type CheckQuestion } from "./check.ts";

/** The answer shapes of check.md §2 / §3 (`questions[]` of the verdict): nothing else is an answer. */

const YES_NO: CheckQuestion = { kind: "yes_no", ask: "Matches?" };
const CHOICE: CheckQuestion = { kind: "choice", ask: "Which?", options: { states: "S", hedges: "H" } };
const RUBRIC: CheckQuestion = { kind: "rubric", ask: "How far?", levels: ["none", "one", "both"] };

const accepts = (q: CheckQuestion, answer: unknown) => answerSchema(q).safeParse(answer).success;

describe("answerSchema (check.md §2)", () => {
  it("yes/no: { answer: p } with p a probability from 0 to 1, nothing more", () => {
    expect(accepts(YES_NO, { answer: 0 })).toBe(true);
    expect(accepts(YES_NO, { answer: 0.62 })).toBe(true);
    expect(accepts(YES_NO, { answer: 1 })).toBe(true);
    expect(accepts(YES_NO, { answer: 1.01 })).toBe(false);
    expect(accepts(YES_NO, { answer: -0.1 })).toBe(false);
    expect(accepts(YES_NO, { answer: "yes" })).toBe(false);
    expect(accepts(YES_NO, { answer: 0.5, confidence: 0.9 })).toBe(false);
    expect(accepts(YES_NO, { answer: 0.5, why: "because" })).toBe(false);
  });

  it("choice: { answer: <one of the names>, confidence: c }", () => {
    expect(accepts(CHOICE, { answer: "states", confidence: 0.91 })).toBe(true);
    expect(accepts(CHOICE, { answer: "unclear", confidence: 0.91 })).toBe(false);
    expect(accepts(CHOICE, { answer: "states" })).toBe(false);
    expect(accepts(CHOICE, { answer: "states", confidence: 2 })).toBe(false);
  });

  it("rubric: { answer: <integer level 0 … n−1>, confidence: c }", () => {
    expect(accepts(RUBRIC, { answer: 0, confidence: 0.5 })).toBe(true);
    expect(accepts(RUBRIC, { answer: 2, confidence: 0.5 })).toBe(true);
    expect(accepts(RUBRIC, { answer: 3, confidence: 0.5 })).toBe(false);
    expect(accepts(RUBRIC, { answer: 1.5, confidence: 0.5 })).toBe(false);
    expect(accepts(RUBRIC, { answer: "both", confidence: 0.5 })).toBe(false);
  });
});
