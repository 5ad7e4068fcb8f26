// Asking the check profile's evaluator for the core's `needsCheck`, outside the run's hot path.
import { answerRequest, type Evaluator } from "@baton/check";
import type { Logger } from "@baton/kit";
import type { CheckAnswers, CheckRequest } from "@baton/protocol";

/**
 * The engine shell's side of the check profile (profiles/check.md §3): the core answers
 * `needsCheck` with a `CheckRequest`; this asks the evaluator for the answers, which the write path
 * then hands back to the core in the same command (so the journal records them and a replay never
 * asks a model again).
 *
 * - One request per question, each tried again once when it fails (`answerRequest`: "the server
 *   retries once"); still without an answer, the answers are `{ error }`, which the core turns into
 *   `retry` (or a recorded `error` verdict under `advisory`).
 * - The same request asked twice while its answers are on the way (a write resent by the gateway
 *   after its attempt time-out, two replicas' worth of resends) waits for the one in flight: one
 *   model call per question and material (`key`).
 * - Never past the caller's deadline: the question is abandoned then, and the write answers `retry`
 *   without applying anything.
 * - Without an evaluator (the process was published while one was configured), every request is
 *   answered `{ error }`.
 */
export class CheckAsker {
  private readonly inFlight = new Map<string, Promise<CheckAnswers>>();

  constructor(
    private readonly evaluator: Evaluator | null,
    private readonly log: Logger,
  ) {}

  /**
   * The answers to `request`, asked within `deadline` (epoch ms, wall clock). Returns null when the
   * deadline came first: the caller has given up, so nothing is to be applied.
   */
  async answer(request: CheckRequest, deadline: number): Promise<CheckAnswers | null> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return null;
    let pending = this.inFlight.get(request.key);
    if (!pending) {
      pending = this.ask(request, deadline).finally(() => this.inFlight.delete(request.key));
      this.inFlight.set(request.key, pending);
    }
    // The evaluator is told the deadline too (its requests are aborted then), but the write does not
    // depend on it listening.
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), remaining);
    });
    try {
      const answers = await Promise.race([pending, expired]);
      return answers === null || Date.now() >= deadline ? null : answers;
    } finally {
      clearTimeout(timer);
    }
  }

  private async ask(request: CheckRequest, deadline: number): Promise<CheckAnswers> {
    if (!this.evaluator) {
      this.log.warn(
        { runId: request.runId, stepId: request.stepId },
        "a step has a check but no evaluator is configured (BATON_CHECK_URL); the check answers error",
      );
      return { key: request.key, model: "none", error: "no evaluator is configured" };
    }
    const answers = await answerRequest(
      this.evaluator,
      request,
      AbortSignal.timeout(Math.max(1, deadline - Date.now())),
    );
    if ("error" in answers) {
      this.log.warn(
        { runId: request.runId, stepId: request.stepId, model: answers.model, error: answers.error },
        "the evaluator gave no answer (after one retry)",
      );
    }
    return answers;
  }
}
