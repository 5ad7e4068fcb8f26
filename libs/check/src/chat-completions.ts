import { answerSchema, type CheckAnswer, type CheckMaterial, type CheckQuestion } from "@baton/protocol";
import pLimit, { type LimitFunction } from "p-limit";
import { type Evaluator, EvaluatorError } from "./evaluator.ts";
import { chatBody } from "./prompt.ts";

/** How to reach an OpenAI-compatible chat-completions server (see `checkSettings`). */
export interface ChatCompletionsSettings {
  /** The base URL including `/v1`; Baton POSTs `${url}/chat/completions`. */
  url: string;
  /** Sent as `Authorization: Bearer <apiKey>`; omitted when absent (a local vLLM or Ollama). */
  apiKey?: string | undefined;
  /** The model name sent with each request and recorded on each verdict. */
  model: string;
  /** How long one request may take, ms, from sending it to its last byte. */
  timeoutMs: number;
  /** How many requests may be in flight at once from this process; the rest wait their turn. */
  concurrency: number;
}

/** The first characters of a text, for an error message. */
const excerpt = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/**
 * An {@link Evaluator} over the OpenAI chat-completions API as OpenAI, Azure OpenAI's v1 endpoint,
 * vLLM, Ollama and the like serve it: one `POST ${url}/chat/completions` per question, asking through
 * `response_format` (a strict JSON Schema) for exactly the question's answer shape, and accepting
 * nothing else (check.md §2–§3). It sends only the question and the material it is given, and fetches
 * nothing else: no file, no link.
 */
export class ChatCompletionsEvaluator implements Evaluator {
  readonly model: string;
  private readonly endpoint: string;
  private readonly limit: LimitFunction;

  constructor(private readonly settings: ChatCompletionsSettings) {
    this.model = settings.model;
    this.endpoint = `${settings.url.replace(/\/+$/, "")}/chat/completions`;
    this.limit = pLimit(settings.concurrency);
  }

  answer(question: CheckQuestion, material: CheckMaterial, signal?: AbortSignal): Promise<CheckAnswer> {
    return this.limit(() => this.ask(question, material, signal));
  }

  private async ask(
    question: CheckQuestion,
    material: CheckMaterial,
    signal?: AbortSignal,
  ): Promise<CheckAnswer> {
    const { timeoutMs, apiKey } = this.settings;
    const timeout = AbortSignal.timeout(timeoutMs);
    const failure = (error: unknown, what: string) =>
      timeout.aborted
        ? new EvaluatorError("timeout", `${this.endpoint} gave no answer within ${timeoutMs} ms`, {
            cause: error,
          })
        : new EvaluatorError(
            "unavailable",
            `${what}: ${error instanceof Error ? error.message : String(error)}`,
            {
              cause: error,
            },
          );
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    let text: string;
    let status: number;
    try {
      const response = await fetch(this.endpoint, {
        method: "POST",
        headers,
        body: JSON.stringify(chatBody(this.model, question, material)),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw failure(error, `${this.endpoint} could not be reached`);
    }
    if (status < 200 || status > 299) {
      // 429 and 5xx may pass; anything else is the server refusing this request.
      const reason = status === 429 || status >= 500 ? "unavailable" : "refused";
      throw new EvaluatorError(reason, `${this.endpoint} answered HTTP ${status}: ${excerpt(text)}`);
    }
    return parseAnswer(question, text);
  }
}

/**
 * The answer in a chat-completions response body: `choices[0].message.content`, a JSON text that must
 * be exactly one answer of the question's shape. A refusal, an empty or cut-off reply, or any other
 * shape is `malformed` (or `refused`): no answer outside the schema is accepted.
 */
export function parseAnswer(question: CheckQuestion, body: string): CheckAnswer {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new EvaluatorError("malformed", `the response is not JSON: ${excerpt(body)}`);
  }
  const message = (json as { choices?: { message?: { content?: unknown; refusal?: unknown } }[] })
    ?.choices?.[0]?.message;
  if (typeof message?.refusal === "string" && message.refusal !== "") {
    throw new EvaluatorError("refused", `the model refused: ${excerpt(message.refusal)}`);
  }
  const content = message?.content;
  if (typeof content !== "string") {
    throw new EvaluatorError("malformed", "the response has no choices[0].message.content text");
  }
  let answer: unknown;
  try {
    answer = JSON.parse(content);
  } catch {
    throw new EvaluatorError("malformed", `the answer is not JSON: ${excerpt(content)}`);
  }
  const parsed = answerSchema(question).safeParse(answer);
  if (!parsed.success) {
    throw new EvaluatorError(
      "malformed",
      `the answer does not fit a ${question.kind} question: ${excerpt(content)} (${parsed.error.issues
        .map((i) => `${i.path.join(".") || "answer"}: ${i.message}`)
        .join("; ")})`,
    );
  }
  return parsed.data as CheckAnswer;
}
