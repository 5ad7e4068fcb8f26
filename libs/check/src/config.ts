import { DEFAULTS } from "@baton/protocol";
import { z } from "zod";
import type { ChatCompletionsSettings } from "./chat-completions.ts";

/**
 * The check profile's environment (check.md §5: "the model and provider are server configuration"),
 * defined once for every service that reads it: the gateway (`describe.profiles`, `describe.limits`),
 * the registry (publishing a process that uses `check`) and the engine (asking the evaluator). A
 * service's `config.ts` spreads these fields into its schema and adds {@link checkEnvIssues}.
 */
export const CHECK_ENV = {
  BATON_CHECK_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe(
      "Base URL of an OpenAI-compatible chat-completions API, including /v1 (OpenAI, Azure OpenAI v1, vLLM, Ollama); Baton POSTs <BATON_CHECK_URL>/chat/completions. Unset: no evaluator, so check-1 is not offered and a process using check is refused at publication.",
    ),
  BATON_CHECK_API_KEY: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Sent as Authorization: Bearer <key> to the evaluator; leave unset for a server that needs none.",
    ),
  BATON_CHECK_MODEL: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Model name sent to the evaluator and recorded as model on every verdict. Required with BATON_CHECK_URL.",
    ),
  BATON_CHECK_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(6_000)
    .describe(
      "How long one evaluator request may take, ms. A question without an answer is asked once more, so twice this must fit in the gateway's BATON_CALL_TIMEOUT_MS (15000 by default) or the agent gets retry while the engine still waits.",
    ),
  BATON_CHECK_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(4)
    .describe("Evaluator requests in flight at once from one process (one request per question)."),
  BATON_CHECK_PASS: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(DEFAULTS.checkPass)
    .describe(
      "describe.limits.checkPass: a yes/no answer at or above it passes unless the question says otherwise.",
    ),
  BATON_CHECK_FAIL: z.coerce
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe(
      "describe.limits.checkFail: a yes/no answer below it fails and between it and the pass threshold is unsure; unset: below pass fails.",
    ),
  BATON_CHECK_CONFIDENCE: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(DEFAULTS.checkConfidence)
    .describe("describe.limits.checkConfidence: a choice or rubric answer below this confidence is unsure."),
  BATON_CHECK_STATE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(DEFAULTS.checkStateBytes)
    .describe(
      "describe.limits.checkStateBytes: how much run data the evaluator is shown; larger run data is cut oldest step first.",
    ),
} as const;

/** The parsed check environment. */
export type CheckEnv = z.infer<z.ZodObject<typeof CHECK_ENV>>;

/**
 * The rules one field cannot state: an evaluator URL needs a model and a model a URL, and the default
 * fail threshold lies below the default pass threshold (check.md §2: between them an answer is unsure).
 */
export function checkEnvIssues(env: Partial<CheckEnv>, ctx: z.RefinementCtx): void {
  const pass = env.BATON_CHECK_PASS ?? DEFAULTS.checkPass;
  if (env.BATON_CHECK_FAIL !== undefined && env.BATON_CHECK_FAIL >= pass) {
    ctx.addIssue({
      code: "custom",
      path: ["BATON_CHECK_FAIL"],
      message: `must be below BATON_CHECK_PASS (${pass})`,
    });
  }
  if (env.BATON_CHECK_URL !== undefined && env.BATON_CHECK_MODEL === undefined) {
    ctx.addIssue({ code: "custom", path: ["BATON_CHECK_MODEL"], message: "required with BATON_CHECK_URL" });
  }
  if (env.BATON_CHECK_MODEL !== undefined && env.BATON_CHECK_URL === undefined) {
    ctx.addIssue({ code: "custom", path: ["BATON_CHECK_URL"], message: "required with BATON_CHECK_MODEL" });
  }
}

/**
 * The check environment alone, with its cross-field rules: what `baton dev` reads (each service's own
 * schema spreads {@link CHECK_ENV} and adds {@link checkEnvIssues} instead).
 */
export const CheckConfigSchema = z.object(CHECK_ENV).superRefine(checkEnvIssues);

/** The evaluator's settings, or `null` when none is configured (check-1 is then not offered). */
export function evaluatorSettings(env: CheckEnv): ChatCompletionsSettings | null {
  if (env.BATON_CHECK_URL === undefined || env.BATON_CHECK_MODEL === undefined) return null;
  return {
    url: env.BATON_CHECK_URL,
    apiKey: env.BATON_CHECK_API_KEY,
    model: env.BATON_CHECK_MODEL,
    timeoutMs: env.BATON_CHECK_TIMEOUT_MS,
    concurrency: env.BATON_CHECK_CONCURRENCY,
  };
}

/**
 * The check profile's server limits (check.md §5), in the shape the engine's `EngineConfig.check`
 * takes; `describe.limits` publishes them as `checkPass`, `checkFail`, `checkConfidence`,
 * `checkStateBytes`.
 */
export interface CheckLimitSettings {
  /** `checkPass`: a yes/no answer at or above it passes. */
  pass: number;
  /** `checkFail`: a yes/no answer below it fails; null: none (below `pass` fails). */
  fail: number | null;
  /** `checkConfidence`: a choice or rubric answer below it is unsure. */
  confidence: number;
  /** `checkStateBytes`: the most run data the evaluator is shown, bytes. */
  stateBytes: number;
}

/**
 * What a service reads of the check profile's environment: the evaluator (null when none is
 * configured, so `check-1` is not offered) and the limits of check.md §5.
 */
export interface CheckSettings {
  evaluator: ChatCompletionsSettings | null;
  limits: CheckLimitSettings;
}

/** No evaluator, the server defaults: what a service runs with when `BATON_CHECK_*` is unset. */
export const NO_EVALUATOR: CheckSettings = {
  evaluator: null,
  limits: {
    pass: DEFAULTS.checkPass,
    fail: DEFAULTS.checkFail,
    confidence: DEFAULTS.checkConfidence,
    stateBytes: DEFAULTS.checkStateBytes,
  },
};

/** The check settings of a parsed environment (the evaluator and the limits). */
export function checkSettings(env: CheckEnv): CheckSettings {
  return { evaluator: evaluatorSettings(env), limits: checkLimits(env) };
}

/**
 * `describe.limits`' check fields (check.md §5) from the environment, in the shape the engine's
 * `EngineConfig.check` takes: `{ pass, fail, confidence, stateBytes }`.
 */
export function checkLimits(env: CheckEnv): CheckLimitSettings {
  return {
    pass: env.BATON_CHECK_PASS,
    fail: env.BATON_CHECK_FAIL ?? null,
    confidence: env.BATON_CHECK_CONFIDENCE,
    stateBytes: env.BATON_CHECK_STATE_BYTES,
  };
}
