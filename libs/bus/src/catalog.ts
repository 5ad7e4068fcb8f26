import { randomUUID } from "node:crypto";
import type { Identity, JournalQuery, ToolArgs, VersionsQuery } from "@baton/protocol";
import { type Bus, BusRemoteError, BusUnavailable, type Envelope } from "./bus.ts";

/**
 * The subject catalog: every service call Baton makes, and who answers it.
 *
 * | subject | served by | payload |
 * |---|---|---|
 * | `engine.p<k>` | the engine replica owning partition k | {@link EngineWrite} |
 * | `engine.read` | any engine replica (queue `engine`) | {@link EngineRead} |
 * | `registry` | any registry replica (queue `registry`) | {@link RegistryCall} |
 * | `evidence` | any evidence replica (queue `evidence`) | {@link EvidenceCall} |
 * | `scheduler` | any scheduler replica (queue `scheduler`) | {@link SchedulerCall} |
 * | `registry.read` | any registry replica (queue `registry`) | {@link RegistryRead} |
 * | `engine.journal` | any engine replica (queue `engine`) | {@link JournalRead} |
 * | `events.<org>.<type>` | the JetStream events stream | domain events |
 *
 * Subjects here are logical: the NATS transport puts its namespace in front (`baton.engine.p3`), so
 * several Baton deployments can share one NATS cluster.
 */
export const SUBJECTS = {
  engineWrite: (partition: number) => `engine.p${partition}`,
  engineRead: "engine.read",
  registry: "registry",
  evidence: "evidence",
  scheduler: "scheduler",
  registryRead: "registry.read",
  engineJournal: "engine.journal",
  event: (org: string, type: string) => `events.${encodeURIComponent(org).replace(/[.%*>]/g, "_")}.${type}`,
} as const;

/** Queue groups, so replicas of one service share a subject. */
export const QUEUES = {
  engine: "engine",
  registry: "registry",
  evidence: "evidence",
  scheduler: "scheduler",
} as const;

/** Tools that change one run and are served by the run's partition owner. */
export type EngineWriteTool =
  | "start_run"
  | "claim"
  | "renew"
  | "submit"
  | "escalate"
  | "decide"
  | "cancel"
  | "send_event";

/** A write to one run. `runId` routes it; `claimId` is the verified content of a claim token. */
export type EngineWrite =
  | {
      [T in EngineWriteTool]: { tool: T; args: ToolArgs[T]; runId: string; claimId?: string };
    }[EngineWriteTool]
  /** The scheduler asks the owner to apply the run's due timers (issue #5); no identity, no requestId. */
  | { tool: "tick"; runId: string };

/** The reply to a `tick`: how many transitions were committed (0 when nothing was due). */
export interface TickResult {
  committed: boolean;
  rev: number | null;
}

/** A read any engine replica serves from PostgreSQL. */
export type EngineRead = {
  [T in "get_run" | "get_work" | "list_runs"]: { tool: T; args: ToolArgs[T] };
}["get_run" | "get_work" | "list_runs"];

/** Registry calls: the catalog tool and the admin API (§7 import, bind, publish). */
export type RegistryCall =
  | { op: "list_processes"; args: ToolArgs["list_processes"] }
  | { op: "import"; folderName: string | null; source: string }
  | { op: "get_draft"; draftId: string }
  | { op: "bind"; draftId: string; bindings: Record<string, string> }
  | { op: "publish"; draftId: string };

/** Evidence calls (§5): record an upload whose bytes the gateway stored, verify refs, resolve for download. */
export type EvidenceCall =
  | {
      op: "register";
      requestId: string;
      fingerprint: string;
      fileName: string;
      contentType: string;
      sha256: string;
      bytes: number;
    }
  | { op: "verify"; refs: string[] }
  | { op: "get"; id: string };

/**
 * Scheduler calls (issue #5): the manual clock, from the admin API (operators only).
 *
 * - `advance`: move the manual clock forward by `ms` (a whole number ≥ 0), then apply every timer that
 *   fell due (cascades included) before replying `{ now, from, manual, applied, pending }`; `pending`
 *   > 0 means the caller's deadline came first. With a `requestId` (1–200 characters) the move is
 *   idempotent: the same call again moves nothing and carries on applying up to the same target (how
 *   the CLI retries and carries on); the id with another `ms` is a `conflict`. `ms: 0` without one
 *   applies what is due at the current time. `conflict` when the clock is real time.
 * - `now`: the current time `{ now, manual }`.
 */
export type SchedulerCall = { op: "advance"; ms: number; requestId?: string } | { op: "now" };

/**
 * The admin API's version reads (issue #16), for anyone in the caller's organization: every published
 * version of a process, or one with its source and definition. Replies `ToolResult<VersionList>` /
 * `ToolResult<VersionDetail>` (`@baton/protocol` admin shapes).
 */
export type RegistryRead = VersionsQuery;

/**
 * A run's journal (issue #16), for anyone in the run's organization. Replies `ToolResult<JournalPage>`;
 * file evidence carries no `url` on the bus (the gateway signs them).
 */
export type JournalRead = JournalQuery;

/** Builds an envelope. */
export function envelope<P>(
  type: string,
  identity: Identity | null,
  payload: P,
  deadline: number,
  trace?: string,
): Envelope<P> {
  const env: Envelope<P> = { type, id: randomUUID(), identity, deadline, payload };
  if (trace) env.trace = trace;
  return env;
}

/** Options of {@link requestWithRetry}. */
export interface RetryOptions {
  /**
   * How long one attempt waits for its reply before the same envelope is sent again, ms. Only for
   * calls whose resend is harmless: writes idempotent on their `requestId` (and fenced by the run's
   * `rev`), ticks, reads. Without it one attempt waits until the deadline.
   */
  attemptMs?: number;
  /** Sleeps between attempts that found nobody serving (tests replace it). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Sends a request, retrying until `deadline` (epoch ms, wall clock) while a retry can help:
 *
 * - nobody serves the subject (a partition hand-over, a restarting service): sent again after a
 *   short back-off (25 ms, doubling to 500 ms);
 * - the handler said a retry can help ({@link RetryableError}): likewise;
 * - with `attemptMs`, an attempt got no reply in that time: sent again at once. The replica it
 *   went to may have died or stalled with it (a `kill -9`, a stopped host), and NATS routes the
 *   new attempt to whoever serves the subject now, so a write whose partition changed owner
 *   reaches the new owner as soon as it serves (issue #8, part 4).
 *
 * Throws the last {@link BusUnavailable} / {@link BusRemoteError} when the deadline passes or the
 * failure is not one a retry can help; the gateway answers `retry` then (ARCHITECTURE rule 5).
 */
export async function requestWithRetry(
  bus: Bus,
  subject: string,
  env: Envelope,
  deadline: number,
  options: RetryOptions = {},
): Promise<unknown> {
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  let delay = 25;
  for (;;) {
    const remaining = deadline - Date.now();
    const attempt = Math.min(remaining, options.attemptMs ?? remaining);
    try {
      return await bus.request(subject, env, Math.max(attempt, 1));
    } catch (error) {
      if (error instanceof BusUnavailable && error.reason === "timeout" && Date.now() < deadline) continue;
      const retryable =
        (error instanceof BusUnavailable && error.reason === "no_responders") ||
        (error instanceof BusRemoteError && error.retryable);
      if (!retryable || Date.now() + delay >= deadline) throw error;
      await sleep(delay);
      delay = Math.min(delay * 2, 500);
    }
  }
}
