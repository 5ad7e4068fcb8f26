import { createHash } from "node:crypto";
import type { RunView, ToolResult } from "@baton/protocol";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { APPROVAL_STEP, approvalProcessName, DECISIONS, type Decision } from "./process.ts";
import {
  type ApprovalHandler,
  type ApprovalRequest,
  approvalInputs,
  type RequestOptions,
} from "./request.ts";
import type { RunEndedReceiver } from "./webhooks.ts";

/** How {@link BatonApprovals} reaches Baton and waits. */
export interface BatonApprovalsOptions {
  /** Baton's MCP endpoint, e.g. `http://127.0.0.1:7800/mcp`. */
  url: string;
  /** An agent's bearer token: starts and reads the approval runs (`start_run`, `get_run`, §4.1). */
  agentToken: string;
  /** An operator's bearer token: cancels a run whose request timed out (`cancel` is operator-only, §4.1). */
  operatorToken: string;
  /** `test` starts test runs (§3.3 test mode: people are told, nothing real is sent). Default `live`. */
  mode?: "live" | "test";
  /** The process that handles a tier; default `tool-approval-<tier>` (what `baton approvals enable` publishes). */
  processFor?: (tier: string) => string;
  /**
   * Waits by webhook: a request wakes when the receiver gets its run's `run.ended`, polling only
   * every `poll.withReceiverMs` as a safety net. Without one, a request polls `get_run` with back-off.
   */
  receiver?: RunEndedReceiver;
  poll?: {
    /** The first wait between two `get_run`s, ms (default 250); it doubles each time… */
    firstMs?: number;
    /** …up to this, ms (default 5,000). */
    maxMs?: number;
    /** With a receiver, the wait between two safety-net `get_run`s, ms (default 30,000). */
    withReceiverMs?: number;
  };
  /** How long a time-out's `cancel` keeps trying while Baton answers `retry` or not at all, ms (default 10,000). */
  cancelGraceMs?: number;
  /** The MCP client's name in `initialize` (default `baton-approval`). */
  clientName?: string;
}

/** The answer to one request, with what Baton recorded. */
export interface ApprovalResult {
  decision: Decision;
  /** The approval run, or null when Baton could not be reached before the time-out (nothing was started). */
  runId: string | null;
  /** The run's state when answered: `ended`, `cancelled`, or the state it was left in when Baton could not be reached. */
  state: string | null;
  /** The run's outcome (`approved`, `denied`, `skipped`, `failed`…), null when it did not end at a finish. */
  outcome: string | null;
  /** Who decided (the person's id), or null. */
  by: string | null;
  /** The reason they gave (§3.2: a route choice carries one), or null. */
  reason: string | null;
  /** True when the request's time-out came before a decision was seen. */
  timedOut: boolean;
}

/**
 * Baton refused a request for a reason waiting cannot fix: the process is not published (`not_found`),
 * the inputs do not fit it (`invalid`), the id was used for another request (`conflict`), a token
 * lacks a role (`forbidden`, `unauthorized`). `code` is the protocol's error code (§4.3).
 */
export class ApprovalError extends Error {
  override name = "ApprovalError";
  constructor(
    readonly code: string,
    message: string,
    readonly issues: string[] = [],
  ) {
    super(issues.length > 0 ? `${message}\n  ${issues.join("\n  ")}` : message);
  }
}

/** Baton could not be reached, or answered `retry`, until the deadline. */
class Unavailable extends Error {}

/** The reason a timed-out request's run is cancelled with: the same every time, so a resent cancel replays (§4). */
export const TIMEOUT_REASON =
  "The agent's runtime stopped waiting for a decision (its time-out); it treats the call as denied.";

/**
 * The `requestId` of the time-out's cancel of run `runId`: derived from the run (whose id Baton derives
 * from the request's id), so a cancel sent again, by this client or after a restart, replays (§4).
 */
export function cancelRequestId(runId: string): string {
  return `approval-timeout-${createHash("sha256").update(runId).digest("hex").slice(0, 40)}`;
}

/**
 * The decision a run records (§3.5): a run that ended at the finish `approved`, `denied` or `skipped`
 * gives that decision; anything else — cancelled, `failed` by a person, `rejected` — is `denied`,
 * because a call nobody approved must not run. Null while the run is active or waiting.
 */
export function decisionOf(run: RunView["run"]): Decision | null {
  if (run.state === "cancelled") return "denied";
  if (run.state !== "ended") return null;
  return (DECISIONS as readonly string[]).includes(run.outcome ?? "") ? (run.outcome as Decision) : "denied";
}

/** Whether a thrown error of the MCP client may pass if the call is sent again. */
function transient(error: unknown): boolean {
  if (error instanceof StreamableHTTPError)
    return error.code === undefined || error.code < 400 || error.code >= 500 || error.code === 429;
  // fetch failures (refused, reset, DNS) are TypeErrors; the SDK's own JSON-RPC errors are McpErrors.
  return error instanceof TypeError || (error as { name?: string }).name === "AbortError";
}

/** One identity's MCP connection to Baton, connected on first use and again after a failure. */
class Session {
  private client: Client | null = null;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly name: string,
  ) {}

  /** Calls a tool once; returns its `{ ok, data | error }`, or throws what the transport threw. */
  async call(tool: string, args: Record<string, unknown>): Promise<ToolResult<unknown>> {
    try {
      if (!this.client) {
        const client = new Client({ name: this.name, version: "1.0.0" });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(this.url), {
            requestInit: { headers: { authorization: `Bearer ${this.token}` } },
          }),
        );
        this.client = client;
      }
      const response = await this.client.callTool({ name: tool, arguments: args });
      const result = response.structuredContent as ToolResult<unknown> | undefined;
      if (!result || typeof result.ok !== "boolean")
        throw new ApprovalError("invalid", `${tool}: the server's answer is not { ok, data | error }`);
      return result;
    } catch (error) {
      const client = this.client;
      this.client = null;
      await client?.close().catch(() => {});
      throw error;
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.close();
  }
}

/** Sleeps `ms`, ending early (without error) when `wake` resolves or `signal` aborts. */
function pause(ms: number, wake?: Promise<void>, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener("abort", done, { once: true });
    void wake?.then(done);
  });
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new DOMException("the approval request was aborted", "AbortError");
}

/**
 * Baton as an agent runtime's approval handler (issue #17): `request(req, { timeoutMs })` starts a run
 * of `tool-approval-<tier>` with the request's id as the `requestId` of `start_run`, so asking again
 * with the same id (after a restart, say) reaches the same run; it then waits until a person in the
 * tier's group decides (`approved`, `denied`, `skipped`), by webhook when a receiver is given, else by
 * polling `get_run` with back-off. When `timeoutMs` passes first, it cancels the run as an operator and
 * answers `denied`; if the cancel finds the run already ended (a person decided at that moment,
 * `conflict` `run_ended`), it answers that recorded decision instead.
 *
 * Answers `retry` and unreachable moments are retried within the time-out (a write with the same
 * `requestId`, which replays, §4). If Baton cannot be reached before the time-out the answer is
 * `denied` (fail closed), and the run, if one was started, may stay open. Refusals that waiting
 * cannot fix throw {@link ApprovalError}.
 */
export class BatonApprovals implements ApprovalHandler {
  private readonly agent: Session;
  private readonly operator: Session;

  constructor(private readonly options: BatonApprovalsOptions) {
    const name = options.clientName ?? "baton-approval";
    this.agent = new Session(options.url, options.agentToken, name);
    this.operator = new Session(options.url, options.operatorToken, name);
  }

  /** The decision for `req` (see the class comment); {@link ask} gives what Baton recorded with it. */
  async request(req: ApprovalRequest, options: RequestOptions): Promise<Decision> {
    return (await this.ask(req, options)).decision;
  }

  /**
   * Asks and waits, as {@link request}, and answers with the run, who decided and their reason.
   * Throws {@link ApprovalError} for a refusal waiting cannot fix, and the signal's `AbortError` when
   * the caller stops waiting (nothing is cancelled then).
   */
  async ask(req: ApprovalRequest, options: RequestOptions): Promise<ApprovalResult> {
    const { timeoutMs, signal } = options;
    if (req.id.length < 1 || req.id.length > 128)
      throw new ApprovalError("invalid", "the request id is the requestId of start_run", [
        `id: 1–128 characters, got ${req.id.length}`,
      ]);
    if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
      throw new ApprovalError("invalid", "timeoutMs is how long to wait for a person", [
        `timeoutMs: a number of milliseconds, 0 or more, got ${String(timeoutMs)}`,
      ]);
    const deadline = Date.now() + timeoutMs;
    const process = (this.options.processFor ?? approvalProcessName)(req.riskTier);
    let started: RunView;
    try {
      started = (await this.write(
        this.agent,
        "start_run",
        { process, inputs: approvalInputs(req), mode: this.options.mode ?? "live", requestId: req.id },
        deadline,
        signal,
      )) as RunView;
    } catch (error) {
      if (error instanceof Unavailable) return this.answer(null, null, true);
      throw error;
    }
    const runId = started.run.id;
    const settled = await this.wait(runId, started, deadline, signal);
    if (settled) return this.answer(settled, runId, false);
    return this.expire(runId, started, signal);
  }

  /** Closes both MCP connections. */
  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.operator.close()]);
  }

  /** The first view that shows a decision, or null when the deadline came first. */
  private async wait(
    runId: string,
    view: RunView,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<RunView | null> {
    if (decisionOf(view.run)) return view;
    const poll = this.options.poll ?? {};
    const receiver = this.options.receiver;
    const watch = receiver?.whenEnded(runId);
    let delay = receiver ? (poll.withReceiverMs ?? 30_000) : (poll.firstMs ?? 250);
    try {
      for (;;) {
        if (signal?.aborted) throw abortError(signal);
        if (Date.now() >= deadline) return null;
        const read = await this.read(runId);
        if (read && decisionOf(read.run)) return read;
        const remaining = deadline - Date.now();
        if (remaining <= 0) return null;
        await pause(Math.min(delay, remaining), watch?.ended, signal);
        if (!receiver) delay = Math.min(delay * 2, poll.maxMs ?? 5_000);
      }
    } finally {
      watch?.stop();
    }
  }

  /**
   * The time-out (issue #17): cancel the run as an operator and answer `denied`; a cancel answered
   * `run_ended` means the run ended first, so its recorded decision is the answer.
   */
  private async expire(
    runId: string,
    view: RunView,
    signal: AbortSignal | undefined,
  ): Promise<ApprovalResult> {
    const grace = Date.now() + (this.options.cancelGraceMs ?? 10_000);
    const args = { runId, reason: TIMEOUT_REASON, requestId: cancelRequestId(runId) };
    try {
      const cancelled = (await this.write(this.operator, "cancel", args, grace, signal)) as RunView;
      return this.answer(cancelled, runId, true);
    } catch (error) {
      if (error instanceof ApprovalError && error.code === "conflict" && error.issues.includes("run_ended")) {
        const ended = await this.read(runId);
        return this.answer(ended ?? view, runId, true);
      }
      // Fail closed: Baton did not answer; the run may stay open and a later ask reads it.
      if (error instanceof Unavailable) return { ...this.answer(view, runId, true), decision: "denied" };
      throw error;
    }
  }

  /** `get_run` once as the agent; null when Baton does not answer now (the wait polls again). */
  private async read(runId: string): Promise<RunView | null> {
    try {
      const result = await this.agent.call("get_run", { runId });
      if (result.ok) return result.data as RunView;
      if (result.error.code === "retry") return null;
      throw new ApprovalError(result.error.code, result.error.message, result.error.issues);
    } catch (error) {
      if (transient(error)) return null;
      throw error;
    }
  }

  /**
   * A write, sent again with the same arguments (so the same `requestId`, which replays, §4) while
   * Baton answers `retry` or cannot be reached, until `deadline`; then {@link Unavailable}. A refusal
   * throws {@link ApprovalError}.
   */
  private async write(
    session: Session,
    tool: string,
    args: Record<string, unknown>,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<unknown> {
    let delay = 100;
    for (;;) {
      if (signal?.aborted) throw abortError(signal);
      let result: ToolResult<unknown> | null = null;
      try {
        result = await session.call(tool, args);
      } catch (error) {
        if (!transient(error)) {
          if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403))
            throw new ApprovalError("unauthorized", `${tool}: Baton refused the token (${error.message})`);
          throw error;
        }
      }
      if (result?.ok) return result.data;
      if (result && result.error.code !== "retry")
        throw new ApprovalError(result.error.code, `${tool}: ${result.error.message}`, result.error.issues);
      if (Date.now() + delay > deadline) throw new Unavailable(`${tool}: Baton did not answer in time`);
      await pause(delay, undefined, signal);
      delay = Math.min(delay * 2, 2_000);
    }
  }

  private answer(view: RunView | null, runId: string | null, timedOut: boolean): ApprovalResult {
    const step = view?.data.steps[APPROVAL_STEP] as { by?: string; reason?: string } | undefined;
    return {
      decision: view ? (decisionOf(view.run) ?? "denied") : "denied",
      runId,
      state: view?.run.state ?? null,
      outcome: view?.run.outcome ?? null,
      by: step?.by ?? view?.run.ended?.by ?? null,
      reason: step?.reason ?? view?.run.ended?.note ?? null,
      timedOut,
    };
  }
}
