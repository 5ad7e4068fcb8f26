import type { CheckAnswer, CheckAnswers, CheckMaterial, CheckQuestion, CheckRequest } from "@baton/protocol";

/**
 * The one interface behind which a model answers check questions (profiles/check.md: "any evaluator
 * that can answer the three question kinds … conforms"). The engine's core never calls it: the shell
 * asks it for the answers to the core's `CheckRequest` ({@link answerRequest}) and hands them back to
 * the core with the command.
 */
export interface Evaluator {
  /** What answers, recorded as `model` on every verdict (check.md §5). */
  readonly model: string;
  /**
   * Answers one question over the material, exactly in the question's answer shape
   * (`answerSchema`): `{ answer: p }`, `{ answer: name, confidence }` or `{ answer: level, confidence }`.
   * One call per question: questions cannot see each other's answers (§2).
   *
   * Throws {@link EvaluatorError} when it cannot: the server is down or refuses, the time-out passed,
   * or the reply is not exactly one answer of that shape. Aborts with `signal`.
   */
  answer(question: CheckQuestion, material: CheckMaterial, signal?: AbortSignal): Promise<CheckAnswer>;
}

/** Why an evaluator gave no answer. */
export type EvaluatorFailure = "unavailable" | "timeout" | "refused" | "malformed";

/** An evaluator gave no answer (check.md §3 `error`); `reason` says which way. */
export class EvaluatorError extends Error {
  override name = "EvaluatorError";
  constructor(
    readonly reason: EvaluatorFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The evaluator's answers to a core's `CheckRequest` (check.md §3): one call per question, all at
 * once (the evaluator bounds its own concurrency), each tried again once if it fails ("the server
 * retries once"). Every question answered → `{ key, model, answers }` in question order; any question
 * still without an answer → `{ key, model, error }` naming it, which the core turns into `retry` (or
 * a recorded `error` verdict under `advisory`). Never throws for an evaluator's failure.
 */
export async function answerRequest(
  evaluator: Evaluator,
  request: CheckRequest,
  signal?: AbortSignal,
): Promise<CheckAnswers> {
  const { key } = request;
  const model = evaluator.model;
  const results = await Promise.all(
    request.questions.map(async (question, i) => {
      let last: unknown;
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          return { ok: true as const, answer: await evaluator.answer(question, request.material, signal) };
        } catch (error) {
          if (!(error instanceof EvaluatorError)) throw error;
          last = error;
          if (signal?.aborted) break;
        }
      }
      const reason = last instanceof Error ? last.message : String(last);
      return { ok: false as const, error: `question ${i + 1} (${question.ask}): ${reason}` };
    }),
  );
  const answers: CheckAnswer[] = [];
  const errors: string[] = [];
  for (const r of results) {
    if (r.ok) answers.push(r.answer);
    else errors.push(r.error);
  }
  return errors.length > 0 ? { key, model, error: errors.join("; ") } : { key, model, answers };
}
