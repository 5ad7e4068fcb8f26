import { z } from "zod";
import { EvidenceItemArg } from "./tools.ts";

/**
 * The check profile's shapes (profiles/check.md): what the evaluator is asked, what it answers, and
 * the verdict recorded in run data. The engine's core computes a {@link CheckRequest} from a
 * submission (a pure function of the run), the shell has the evaluator answer it, and the answers
 * come back into the core as part of the command ({@link CheckAnswers}), so a replay or the journal
 * never calls a model a second time.
 */

const probability = z.number().min(0).max(1);
const jsonObject = z.record(z.string(), z.unknown());

/**
 * One question as the evaluator sees it (check.md §2): the text and what may be answered, and
 * nothing of the thresholds, which are the server's business and would only bias the answer.
 */
export const CheckQuestion = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("yes_no"), ask: z.string().min(1) }),
  z.strictObject({
    kind: z.literal("choice"),
    ask: z.string().min(1),
    /** Answer name → description, two or more. */
    options: z.record(z.string(), z.string()),
  }),
  z.strictObject({
    kind: z.literal("rubric"),
    ask: z.string().min(1),
    /** Level descriptions, worst first; the answer is a 0-based index. */
    levels: z.array(z.string()).min(2).max(10),
  }),
]);
export type CheckQuestion = z.infer<typeof CheckQuestion>;

/**
 * What the evaluator sees, exactly the list of check.md §2: the step's instructions, the body, the run
 * data (at most `limits.checkStateBytes` of it, oldest step records dropped first, with `truncated`
 * saying so, §5), and the submission's output, summary and evidence references. Never a file's
 * contents and never a file `url`: the evaluator does not open files.
 */
export const CheckMaterial = z.strictObject({
  instructions: z.string(),
  body: z.string(),
  runData: z.strictObject({ inputs: jsonObject, steps: z.record(z.string(), jsonObject) }),
  truncated: z.boolean(),
  submission: z.strictObject({
    output: jsonObject,
    /** `null` when a person completed a task without one (§3.3: optional from people). */
    summary: z.string().nullable(),
    evidence: z.array(EvidenceItemArg),
  }),
});
export type CheckMaterial = z.infer<typeof CheckMaterial>;

/**
 * The core's request for answers: the questions of the step's check over one submission's material.
 * `key` is a SHA-256 over everything else; answers are used only for the request with the same key,
 * so answers given for other material (run data changed meanwhile) are asked again, never misapplied.
 */
export const CheckRequest = z.strictObject({
  key: z.string().min(1),
  runId: z.string(),
  stepId: z.string(),
  questions: z.array(CheckQuestion).min(1),
  material: CheckMaterial,
});
export type CheckRequest = z.infer<typeof CheckRequest>;

/**
 * The answer shape of one question (check.md §2, the verdict's `questions[]`): `{ answer: p }` for
 * yes/no, a probability from 0 to 1; `{ answer: "<name>", confidence: c }` for a choice, a name of
 * its options; `{ answer: <level>, confidence: c }` for a rubric, an integer level. Nothing else is
 * an answer. The evaluator client asks for exactly this (as a JSON Schema) and the core checks it again.
 */
export function answerSchema(question: CheckQuestion) {
  switch (question.kind) {
    case "yes_no":
      return z.strictObject({ answer: probability });
    case "choice": {
      const names = Object.keys(question.options);
      const [first, ...rest] = names;
      if (first === undefined) throw new Error(`choice "${question.ask}" has no options`);
      return z.strictObject({ answer: z.enum([first, ...rest]), confidence: probability });
    }
    case "rubric":
      return z.strictObject({
        answer: z
          .number()
          .int()
          .min(0)
          .max(question.levels.length - 1),
        confidence: probability,
      });
    default: {
      const unreachable: never = question;
      throw new Error(`unknown question ${JSON.stringify(unreachable)}`);
    }
  }
}

/** One answer as the evaluator gave it; checked against {@link answerSchema} before it counts. */
export const CheckAnswer = z.strictObject({
  answer: z.union([z.number(), z.string()]),
  confidence: z.number().optional(),
});
export type CheckAnswer = z.infer<typeof CheckAnswer>;

/**
 * The evaluator's answers to a {@link CheckRequest}, carried into the core by the command: one answer
 * per question in order, or `error` when the evaluator did not answer (after the one retry of
 * check.md §3). `model` records what answered (§5).
 */
export const CheckAnswers = z.union([
  z.strictObject({ key: z.string(), model: z.string(), answers: z.array(CheckAnswer) }),
  z.strictObject({ key: z.string(), model: z.string(), error: z.string() }),
]);
export type CheckAnswers = z.infer<typeof CheckAnswers>;

/** A question's result (check.md §2 thresholds). */
export type QuestionResult = "pass" | "fail" | "unsure";

/** One question of a verdict (check.md §3; schemas/core-2/check-verdict.json `questions[]`). */
export interface QuestionVerdict {
  ask: string;
  kind: CheckQuestion["kind"];
  /** The probability (yes/no), the answer name (choice) or the level (rubric). */
  answer: number | string | null;
  /** On a choice and a rubric. */
  confidence?: number;
  result: QuestionResult;
}

/**
 * A verdict (check.md §3; schemas/core-2/check-verdict.json): the worst question (unsure outranks
 * fail, fail outranks pass), or `error` when the evaluator did not answer. Recorded as
 * `steps.<id>.check` (pass, unsure, advisory) or in `handoff.check` (a blocking fail).
 */
export interface CheckVerdict {
  verdict: QuestionResult | "error";
  advisory: boolean;
  /** What answered (§5). */
  model: string;
  questions: QuestionVerdict[];
  /** Present (true) when the run data shown to the evaluator was cut to `limits.checkStateBytes` (§5). */
  truncated?: boolean;
  at: string;
}
