/**
 * The `check` key of the check profile as the runtime reads it (profiles/check.md §2): the short form
 * (one yes/no question as text) or a list of questions of three kinds, with their thresholds as
 * written. Thresholds the author left out are `null` here; the server's defaults
 * (`describe.limits.checkPass`, `checkFail`, `checkConfidence`, check.md §5) fill them at run time.
 *
 * Published versions store the key as parsed (plain JSON), so this reads that value. It assumes the
 * value passed validation (validate-check.ts) and throws on anything else: a run never reaches here
 * with a check the registry would have refused.
 */

import type { AgentStep, TaskStep } from "./types.ts";

/** A yes/no question: the answer is the probability of yes (check.md §2). */
export interface YesNoCheck {
  kind: "yes_no";
  ask: string;
  /** The yes-probability at or above which the answer passes; `null` = the server default. */
  pass: number | null;
  /** Below it the answer fails, between it and `pass` it is unsure; `null` = the server default. */
  fail: number | null;
}

/** A choice: the answer is one of the names of `one_of`, with a confidence (check.md §2). */
export interface ChoiceCheck {
  kind: "choice";
  ask: string;
  /** Answer name → description, in the order written. */
  options: Record<string, string>;
  /** Answer names that pass. */
  pass: string[];
  /** Answer names that are unsure; any other answer fails. */
  unsure: string[];
  /** Below this confidence the answer is unsure; `null` = the server default. */
  confidence: number | null;
}

/** A rubric: the answer is a 0-based level of `levels` (worst first), with a confidence (check.md §2). */
export interface RubricCheck {
  kind: "rubric";
  ask: string;
  /** Level descriptions, worst first (2–10). */
  levels: string[];
  /** The level at or above which the answer passes. */
  pass: number;
  /** Below this confidence the answer is unsure; `null` = the server default. */
  confidence: number | null;
}

/** One question of a check. */
export type CheckQuestionDef = YesNoCheck | ChoiceCheck | RubricCheck;

/** A step's check: its questions, in the order written, and whether it is advisory. */
export interface CheckDef {
  questions: CheckQuestionDef[];
  /** `advisory: true`: every verdict is recorded and none blocks (check.md §2, §3). */
  advisory: boolean;
}

const numberOrNull = (v: unknown): number | null => (typeof v === "number" ? v : null);

function question(raw: unknown, at: string): CheckQuestionDef {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new Error(`${at}: not a question; the process was not validated`);
  }
  const q = raw as Record<string, unknown>;
  const ask = q.ask;
  if (typeof ask !== "string") throw new Error(`${at}.ask: not text; the process was not validated`);
  if (q.one_of !== undefined) {
    return {
      kind: "choice",
      ask,
      options: Object.fromEntries(
        Object.entries(q.one_of as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
      ),
      pass: [...((q.pass as string[] | undefined) ?? [])],
      unsure: [...((q.unsure as string[] | undefined) ?? [])],
      confidence: numberOrNull(q.confidence),
    };
  }
  if (q.levels !== undefined) {
    return {
      kind: "rubric",
      ask,
      levels: (q.levels as unknown[]).map(String),
      pass: q.pass as number,
      confidence: numberOrNull(q.confidence),
    };
  }
  return { kind: "yes_no", ask, pass: numberOrNull(q.pass), fail: numberOrNull(q.fail) };
}

/**
 * The check of an agent or task step (check.md §2), or `null` when the step has none. The short form
 * becomes one yes/no question with default thresholds.
 */
export function checkOf(step: AgentStep | TaskStep): CheckDef | null {
  const raw = step.check;
  if (raw === null || raw === undefined) return null;
  const advisory = step.advisory === true;
  if (typeof raw === "string") {
    return { questions: [{ kind: "yes_no", ask: raw, pass: null, fail: null }], advisory };
  }
  if (!Array.isArray(raw)) throw new Error(`steps.${step.id}.check: not a question or a list`);
  return { questions: raw.map((q, i) => question(q, `steps.${step.id}.check[${i}]`)), advisory };
}
