/**
 * `@baton/check`: the evaluator of the check profile (profiles/check.md) — one interface, an
 * OpenAI-compatible chat-completions client, the prompt, and the environment that configures it.
 * The engine's core never imports this package: the shell asks the evaluator and hands the answers
 * to the core with the command.
 */

export { ChatCompletionsEvaluator, type ChatCompletionsSettings, parseAnswer } from "./chat-completions.ts";
export {
  CHECK_ENV,
  CheckConfigSchema,
  type CheckEnv,
  type CheckLimitSettings,
  type CheckSettings,
  checkEnvIssues,
  checkLimits,
  checkSettings,
  evaluatorSettings,
  NO_EVALUATOR,
} from "./config.ts";
export {
  answerRequest,
  type Evaluator,
  EvaluatorError,
  type EvaluatorFailure,
} from "./evaluator.ts";
export { answerJsonSchema, chatBody, INSTRUCTIONS, questionText } from "./prompt.ts";
