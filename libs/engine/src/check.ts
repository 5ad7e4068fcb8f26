import { createHash } from "node:crypto";
import type { AgentStep, CheckDef, CheckQuestionDef, TaskStep } from "@baton/process";
import {
  answerSchema,
  type CheckAnswers,
  type CheckQuestion,
  type CheckRequest,
  type CheckVerdict,
  canonicalJson,
  DEFAULTS,
  type EvidenceItemArg,
  type QuestionResult,
  type QuestionVerdict,
  type RunData,
} from "@baton/protocol";
import type { CheckLimits } from "./run.ts";
import { jsonBytes } from "./snapshot.ts";

/**
 * The check profile's pure part (profiles/check.md §2–§5): what the evaluator is asked about a
 * submission, and the verdict its answers make. The evaluator itself is outside the core; its answers
 * come in with the command (`submit.check`, `decide.check`).
 */

/** check.md §5's server defaults, from `DEFAULTS` (the values `describe.limits` publishes). */
export const DEFAULT_CHECK_LIMITS: CheckLimits = {
  pass: DEFAULTS.checkPass,
  fail: DEFAULTS.checkFail,
  confidence: DEFAULTS.checkConfidence,
  stateBytes: DEFAULTS.checkStateBytes,
};

/** A question as the evaluator sees it: the text and the possible answers, never a threshold. */
export function evaluatorQuestion(q: CheckQuestionDef): CheckQuestion {
  switch (q.kind) {
    case "yes_no":
      return { kind: "yes_no", ask: q.ask };
    case "choice":
      return { kind: "choice", ask: q.ask, options: { ...q.options } };
    case "rubric":
      return { kind: "rubric", ask: q.ask, levels: [...q.levels] };
    default: {
      const unreachable: never = q;
      throw new Error(`unknown question ${JSON.stringify(unreachable)}`);
    }
  }
}

/** When a step record was last written: the latest `at` of its current fields, its check, its history. */
function lastWritten(record: Record<string, unknown>): string {
  const times: string[] = [];
  if (typeof record.at === "string") times.push(record.at);
  const check = record.check as { at?: unknown } | undefined;
  if (typeof check?.at === "string") times.push(check.at);
  const history = record.history;
  if (Array.isArray(history)) {
    for (const h of history) if (typeof (h as { at?: unknown }).at === "string") times.push(h.at);
  }
  return times.sort().at(-1) ?? "";
}

/**
 * The run data the evaluator is shown (check.md §5): all of it when its canonical JSON fits
 * `stateBytes`, else with step records dropped oldest first (by when each was last written; step id
 * breaks ties) until it fits. Inputs are never dropped: they are what the run is about. Sizes are
 * summed per record, exactly as canonical JSON (no whitespace) lays the object out.
 */
export function shownRunData(data: RunData, stateBytes: number): { runData: RunData; truncated: boolean } {
  const entries = Object.entries(data.steps);
  const entryBytes = new Map(entries.map(([id, rec]) => [id, jsonBytes(id) + 1 + jsonBytes(rec)]));
  const base = jsonBytes({ inputs: data.inputs, steps: {} });
  let sum = 0;
  for (const b of entryBytes.values()) sum += b;
  let remaining = entries.length;
  // `{"inputs":…,"steps":{}}` plus each `"id":record`, separated by commas.
  const size = () => base + sum + Math.max(0, remaining - 1);
  if (size() <= stateBytes) return { runData: data, truncated: false };
  const order = entries
    .map(([id, rec]) => ({ id, at: lastWritten(rec as unknown as Record<string, unknown>) }))
    .sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id));
  const dropped = new Set<string>();
  for (const { id } of order) {
    if (size() <= stateBytes) break;
    dropped.add(id);
    sum -= entryBytes.get(id) ?? 0;
    remaining -= 1;
  }
  const steps = Object.fromEntries(entries.filter(([id]) => !dropped.has(id)));
  return { runData: { inputs: data.inputs, steps }, truncated: true };
}

/** What was submitted, as the check reads it. */
export interface CheckedSubmission {
  output: Record<string, unknown>;
  summary: string | undefined;
  evidence: readonly EvidenceItemArg[] | undefined;
}

/**
 * The request for answers about one submission (check.md §2 "What the evaluator sees"): the step's
 * instructions, the body, the run data (cut to `limits.stateBytes`), the submission's output, summary
 * and evidence references, and each question. `key` hashes all of it with the run and step ids.
 */
export function checkRequest(
  runId: string,
  step: AgentStep | TaskStep,
  check: CheckDef,
  body: string,
  data: RunData,
  submission: CheckedSubmission,
  limits: CheckLimits,
): CheckRequest {
  const shown = shownRunData(data, limits.stateBytes);
  const questions = check.questions.map(evaluatorQuestion);
  const material = {
    instructions: step.instructions,
    body,
    runData: shown.runData as unknown as CheckRequest["material"]["runData"],
    truncated: shown.truncated,
    submission: {
      output: submission.output,
      summary: submission.summary ?? null,
      evidence: (submission.evidence ?? []).map((e) => ({ kind: e.kind, ref: e.ref })),
    },
  };
  const key = createHash("sha256")
    .update(canonicalJson({ runId, stepId: step.id, questions, material }))
    .digest("hex");
  return { key, runId, stepId: step.id, questions, material };
}

/** A question's result by its thresholds (check.md §2), the author's or else the server's. */
function resultOf(
  q: CheckQuestionDef,
  answer: number | string,
  confidence: number | undefined,
  limits: CheckLimits,
): QuestionResult {
  switch (q.kind) {
    case "yes_no": {
      const p = answer as number;
      if (p >= (q.pass ?? limits.pass)) return "pass";
      const fail = q.fail ?? limits.fail;
      return fail !== null && p >= fail ? "unsure" : "fail";
    }
    case "choice": {
      if ((confidence ?? 0) < (q.confidence ?? limits.confidence)) return "unsure";
      const name = answer as string;
      if (q.pass.includes(name)) return "pass";
      return q.unsure.includes(name) ? "unsure" : "fail";
    }
    case "rubric":
      if ((confidence ?? 0) < (q.confidence ?? limits.confidence)) return "unsure";
      return (answer as number) >= q.pass ? "pass" : "fail";
    default: {
      const unreachable: never = q;
      throw new Error(`unknown question ${JSON.stringify(unreachable)}`);
    }
  }
}

const RANK: Record<QuestionResult, number> = { pass: 0, fail: 1, unsure: 2 };

/**
 * The verdict of the evaluator's answers (check.md §3): each answer checked against its question's
 * answer shape and judged by the thresholds; the verdict is the worst question (unsure outranks
 * fail, fail outranks pass). `error` when the evaluator did not answer, or answered anything that is
 * not exactly one well-shaped answer per question ("no answer outside the schema is accepted").
 */
export function verdictOf(
  check: CheckDef,
  answers: CheckAnswers,
  limits: CheckLimits,
  truncated: boolean,
  at: string,
): CheckVerdict {
  const base = { advisory: check.advisory, model: answers.model };
  const stamp = (v: CheckVerdict): CheckVerdict => (truncated ? { ...v, truncated: true } : v);
  const error = () => stamp({ verdict: "error", ...base, questions: [], at });
  if ("error" in answers || answers.answers.length !== check.questions.length) return error();
  const questions: QuestionVerdict[] = [];
  for (const [i, q] of check.questions.entries()) {
    const parsed = answerSchema(evaluatorQuestion(q)).safeParse(answers.answers[i]);
    if (!parsed.success) return error();
    const a = parsed.data as { answer: number | string; confidence?: number };
    const result = resultOf(q, a.answer, a.confidence, limits);
    questions.push(
      a.confidence === undefined
        ? { ask: q.ask, kind: q.kind, answer: a.answer, result }
        : { ask: q.ask, kind: q.kind, answer: a.answer, confidence: a.confidence, result },
    );
  }
  const worst = questions.reduce<QuestionResult>((w, q) => (RANK[q.result] > RANK[w] ? q.result : w), "pass");
  return stamp({ verdict: worst, ...base, questions, at });
}

/**
 * A question's answer as an issue line shows it (check.md §3): `no (p)` when a yes/no `p` is below
 * its pass threshold and `yes (p)` otherwise; `<name> (<confidence>)` for a choice;
 * `level <n>: <level text> (<confidence>)` for a rubric.
 */
function answerText(q: CheckQuestionDef, v: QuestionVerdict, limits: CheckLimits): string {
  switch (q.kind) {
    case "yes_no": {
      const p = v.answer as number;
      return `${p < (q.pass ?? limits.pass) ? "no" : "yes"} (${p})`;
    }
    case "choice":
      return `${String(v.answer)} (${v.confidence})`;
    case "rubric":
      return `level ${v.answer}: ${q.levels[v.answer as number] ?? ""} (${v.confidence})`;
    default: {
      const unreachable: never = q;
      throw new Error(`unknown question ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * The lines `check: <ask> → <answer>` of every question whose result is one of `results`, in question
 * order: a blocking `fail` lists its failed questions as the `not_accepted` issues (check.md §3); an
 * `unsure` verdict lists the questions that did not pass (unsure and failed) in its escalation note,
 * and again in `handoff.issues` when the person returns the step ("the agent's `handoff.issues`
 * carries the same lines").
 */
export function checkLines(
  check: CheckDef,
  verdict: CheckVerdict,
  results: readonly QuestionResult[],
  limits: CheckLimits,
): string[] {
  const lines: string[] = [];
  verdict.questions.forEach((v, i) => {
    const q = check.questions[i];
    if (q && results.includes(v.result)) lines.push(`check: ${v.ask} → ${answerText(q, v, limits)}`);
  });
  return lines;
}
