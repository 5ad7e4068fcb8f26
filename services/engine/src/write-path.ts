// The write path: load → core → commit (or replay) → reply, one run at a time (ARCHITECTURE rules 1, 2).
import type { ClaimTokens } from "@baton/auth";
import type { EngineWrite, Envelope, HandlerReply, TickResult } from "@baton/bus";
import { type CONTRACTS, RetryableError } from "@baton/bus";
import type { Clock } from "@baton/clock";
import {
  apply,
  type Command,
  type EngineConfig,
  fileRefsOf,
  type Outcome,
  type PublishedProcess,
  type Run,
  runView,
  startRun,
} from "@baton/engine";
import { claimLeasesExpired, transitions } from "@baton/kit";
import {
  type CheckAnswers,
  type CheckRequest,
  type FileCheck,
  fail,
  type Identity,
  ok,
  protocolError,
  requestFingerprint,
  type ToolResult,
} from "@baton/protocol";
import type { CheckAsker } from "./checks.ts";
import { KeyedMutex } from "./keyed-mutex.ts";
import type { RunCache } from "./run-cache.ts";
import { type EngineStore, FenceLost, IdempotencyConflict, StaleVersion } from "./store.ts";
import { firedTimers, type RunWrite, resultOf, toCommand } from "./translate.ts";

/** What the write path needs (the engine shell builds it once). */
export interface WritePathDeps {
  store: EngineStore;
  cache: RunCache;
  clock: Clock;
  tokens: ClaimTokens;
  settings: EngineConfig & {
    partitions: number;
    /**
     * How long idempotency records are kept before the scheduler prunes them, ms of the clock
     * (`BATON_IDEMPOTENCY_RETENTION_HOURS`; default 7 days). A write to a run older than this is
     * checked against the run's journal for its `requestId` when it has no record.
     */
    idempotencyRetentionMs?: number;
  };
  /**
   * The evidence service's check of a command's `file` refs (§5), asked as the caller within the
   * call's deadline and on behalf of its trace.
   */
  verifyFiles: (
    who: Identity,
    refs: string[],
    on: { deadline: number; trace?: string | undefined },
  ) => Promise<Map<string, FileCheck>>;
  /** Asks the evaluator for a check's answers (check.md §3), outside the run's mutex. */
  checks: CheckAsker;
  /** Called after every commit (the outbox relay's kick). */
  committed: () => void;
}

/** How long idempotency records are kept when nothing says otherwise: 7 days (`BATON_IDEMPOTENCY_RETENTION_HOURS`). */
export const DEFAULT_IDEMPOTENCY_RETENTION_MS = 168 * 3_600_000;

/**
 * Counts a committed transition (`baton_transitions_total`) and the claim leases it ended
 * (`baton_claim_leases_expired_total`: a lease timer fired in it, by a tick or caught up by a write).
 */
function counted(outcome: Outcome): void {
  transitions.inc();
  for (const timer of outcome.fired) if (timer.kind === "lease") claimLeasesExpired.inc();
}

/**
 * How many times one write asks the evaluator before it answers `retry`: the answers are asked
 * again when run data changed while the model answered (a sibling branch completed, parallel.md
 * §3), since they were given for other material (check.md §2).
 */
const CHECK_ROUNDS = 3;

/** One write's commit: the transition, who made it with which call, and the result to record. */
interface Commit {
  who: Identity;
  tool: string;
  requestId: string;
  /** The idempotency fingerprint of the call (§4). */
  fingerprint: string;
  args: Record<string, unknown>;
  before: Run | null;
  outcome: Outcome;
  def: PublishedProcess;
  /** The result to record and reply; null for a refusal that changed the run (never recorded). */
  result: ToolResult<unknown> | null;
  /** The evaluator's answers the command carried (check.md §3), recorded in the journal. */
  check?: CheckAnswers | undefined;
  /** A `start_run` without a version, computed on the cached latest version (`Transition.latest`). */
  latest?: boolean;
}

/** The reply to an engine write. */
export type WriteReply = HandlerReply<typeof CONTRACTS.engineWrite>;

/**
 * The engine's write path (ARCHITECTURE rule 1): for each write, load the run (from memory or
 * PostgreSQL), call the pure core, commit the transition in one statement (rule 2), or replay the
 * recorded result of the same `requestId` (§4), and reply only after the commit. Writes to one run
 * are serialized in this replica by a per-run mutex and fenced across replicas by the run's `rev`.
 */
export function createWritePath(deps: WritePathDeps): {
  write(env: Envelope<EngineWrite>): Promise<WriteReply>;
} {
  const { store, cache, clock, tokens, settings } = deps;
  const retentionMs = settings.idempotencyRetentionMs ?? DEFAULT_IDEMPOTENCY_RETENTION_MS;
  const mutex = new KeyedMutex();

  /** The original result for a replay, `conflict` for a reused `requestId`, or null when unrecorded (§4). */
  async function replay(who: Identity, requestId: string, fp: string): Promise<ToolResult<unknown> | null> {
    const record = await store.getIdempotency(who.org, requestId);
    if (!record) return null;
    if (record.fingerprint === fp) return record.result;
    return fail(
      protocolError(
        "conflict",
        `requestId ${requestId} was already used for a different call; send a new requestId`,
      ),
    );
  }

  /**
   * `conflict` when `requestId` was already applied to `run` and its idempotency record is gone:
   * past the retention window (issue #13), a replay can no longer get its original result, and
   * must never be applied twice (§4.3 "changes nothing"). Only a run older than the window can have
   * lost a record, so younger runs (nearly every write) pay nothing; an older one pays a lookup of
   * the record and, without one, of its journal.
   */
  async function expiredReplay(
    run: Run,
    who: Identity,
    requestId: string,
  ): Promise<ToolResult<never> | null> {
    if (clock.now() - run.startedAt <= retentionMs) return null;
    if (await store.getIdempotency(who.org, requestId)) return null;
    if (!(await store.journalApplied(run.id, requestId))) return null;
    return fail(
      protocolError(
        "conflict",
        `requestId ${requestId} was already applied to run ${run.id}; its recorded result is past the server's idempotency retention window, so it cannot be returned again; read the run with get_run, and send a new requestId for a new call`,
      ),
    );
  }

  /**
   * Commits one write's transition with its journal entry and idempotency record; on a lost fence
   * (another replica wrote during a hand-over, or a new run's id exists) answers `fence` so the
   * caller reloads and tries again, and on a stale latest version (`c.latest`) answers `stale` so
   * the caller reads the latest version and computes the run again.
   */
  async function commit(c: Commit): Promise<ToolResult<unknown> | "fence" | "stale"> {
    const after: Run = { ...c.outcome.run, rev: (c.before?.rev ?? 0) + 1 };
    const { token: _token, contentBase64: _bytes, ...journalArgs } = c.args;
    try {
      await store.commit({
        before: c.before,
        after,
        def: c.def,
        journal: {
          actor: c.who.id,
          actorKind: c.who.kind,
          command: c.tool,
          requestId: c.requestId,
          detail: {
            args: journalArgs,
            error: c.outcome.error?.code ?? null,
            timers: firedTimers(c.outcome),
            ...(c.check ? { check: c.check } : {}),
          },
        },
        idempotency: c.result
          ? { requestId: c.requestId, tool: c.tool, fingerprint: c.fingerprint, result: c.result }
          : null,
        events: c.outcome.events,
        partitions: settings.partitions,
        ...(c.latest ? { latest: true } : {}),
      });
    } catch (error) {
      if (error instanceof StaleVersion) return "stale";
      if (error instanceof IdempotencyConflict) {
        return (
          (await replay(c.who, c.requestId, c.fingerprint)) ??
          fail(protocolError("retry", "try again with the same requestId"))
        );
      }
      if (error instanceof FenceLost) {
        cache.forget(after.id);
        return "fence";
      }
      // The database failed (a dropped connection, a fail-over): the commit may or may not have
      // been applied, so the cached run is not to be trusted. The next write reloads it; a retry of
      // this one is then replayed from its idempotency record or fenced by the run's rev.
      cache.forget(after.id);
      throw error;
    }
    cache.remember(after);
    counted(c.outcome);
    deps.committed();
    if (c.result) return c.result;
    if (!c.outcome.error) throw new Error("a transition with neither a result nor an error");
    return fail(c.outcome.error);
  }

  /**
   * One write to an existing run (§4): loads the run and applies the command under the run's mutex.
   * When the core needs a check's answers (`needsCheck`, check.md §3), the mutex is released while
   * the evaluator answers, and the same command is applied again with the answers; the run may have
   * changed meanwhile, in which case the core asks again (up to {@link CHECK_ROUNDS} times).
   */
  async function runCommand(
    who: Identity,
    write: RunWrite,
    on: { deadline: number; trace?: string | undefined },
  ): Promise<ToolResult<unknown>> {
    let answers: CheckAnswers | undefined;
    for (let round = 0; round <= CHECK_ROUNDS; round++) {
      const step = await mutex.run(write.runId, () => applyWrite(who, write, on, answers));
      if (!("needsCheck" in step)) return step;
      if (round === CHECK_ROUNDS) break;
      const asked = await deps.checks.answer(step.needsCheck, on.deadline);
      if (!asked) break;
      answers = asked;
    }
    return fail(
      protocolError(
        "retry",
        "the check on this submission could not be completed in time; nothing changed, retry with the same requestId",
      ),
    );
  }

  /** Applies one write (with the evaluator's answers, when it has them) and commits, or says what the core needs. */
  async function applyWrite(
    who: Identity,
    write: RunWrite,
    on: { deadline: number; trace?: string | undefined },
    answers: CheckAnswers | undefined,
  ): Promise<ToolResult<unknown> | { needsCheck: CheckRequest }> {
    const args: Record<string, unknown> = write.args;
    const requestId = write.args.requestId;
    const fingerprint = requestFingerprint(write.tool, args, who);
    const command = withAnswers(toCommand(write), answers);
    for (let attempt = 0; attempt < 2; attempt++) {
      const run = await cache.load(write.runId);
      if (!run || run.org !== who.org) {
        return fail(protocolError("not_found", `no run ${write.runId} in your organization`));
      }
      const expired = await expiredReplay(run, who, requestId);
      if (expired) return expired;
      const def = await cache.version(run.org, run.process, run.version);
      const files = await deps.verifyFiles(who, fileRefsOf(command), on);
      const now = clock.now();
      const outcome = apply(run, command, { actor: who, now, def, config: settings, files });
      if (outcome.needsCheck) {
        // A call already answered is replayed before any model is asked (§4).
        return (await replay(who, requestId, fingerprint)) ?? { needsCheck: outcome.needsCheck };
      }
      const base = {
        who,
        tool: write.tool,
        requestId,
        fingerprint,
        args,
        before: run,
        outcome,
        def,
        check: answers,
      };
      if (outcome.error) {
        const replayed = await replay(who, requestId, fingerprint);
        if (replayed) return replayed;
        if (!outcome.changed) return fail(outcome.error);
        const committed = await commit({ ...base, result: null });
        if (committed === "fence" || committed === "stale") continue;
        return committed;
      }
      const committed = await commit({ ...base, result: resultOf(outcome, { def, now, tokens }) });
      if (committed === "fence" || committed === "stale") continue;
      return committed;
    }
    throw new RetryableError(`run ${write.runId} changed under this replica twice; retry`);
  }

  /**
   * `start_run` (§3.2, tools.md start_run) with nothing read before its one commit (issue #15): the
   * run id is new unless this is a replay (the gateway derives it from the organization and the
   * `requestId`), so the run is not looked up first: a replay finds the idempotency record taken in
   * the commit (then the recorded result is returned), or, past the retention window, the run's
   * id taken (then `conflict`). The version comes from memory; without an explicit one, the commit
   * checks it is still the latest, and a newer one makes it read the latest and compute again.
   */
  async function start(
    who: Identity,
    write: Extract<EngineWrite, { tool: "start_run" }>,
  ): Promise<ToolResult<unknown>> {
    const args: Record<string, unknown> = write.args;
    const { requestId, process, version } = write.args;
    const fingerprint = requestFingerprint("start_run", args, who);
    const taken = async () =>
      (await replay(who, requestId, fingerprint)) ??
      fail(protocolError("conflict", `requestId ${requestId} was already used; send a new requestId`));
    for (let attempt = 0; attempt < 3; attempt++) {
      if (cache.peek(write.runId)) return taken();
      const def = await cache.published(who.org, process, version);
      if (!def) {
        const replayed = await replay(who, requestId, fingerprint);
        if (replayed) return replayed;
        return fail(
          protocolError(
            "not_found",
            version === undefined
              ? `no published process ${process} in your organization`
              : `no version ${version} of ${process} in your organization`,
          ),
        );
      }
      const now = clock.now();
      const outcome = startRun(
        { runId: write.runId, inputs: write.args.inputs, mode: write.args.mode ?? "live" },
        { actor: who, now, def, config: settings },
      );
      if (!("run" in outcome)) return (await replay(who, requestId, fingerprint)) ?? fail(outcome.error);
      const result = ok(runView(outcome.run, def, now));
      const committed = await commit({
        who,
        tool: "start_run",
        requestId,
        fingerprint,
        args,
        before: null,
        outcome,
        def,
        result,
        latest: version === undefined,
      });
      if (committed === "stale") {
        cache.forgetLatest(who.org, process);
        continue;
      }
      if (committed === "fence") return taken();
      return committed;
    }
    throw new RetryableError(`${process} was published again while run ${write.runId} started; retry`);
  }

  /**
   * Applies a run's due timers (lease expiry, waits, time-outs, `due`) as an ordinary transition
   * (issue #5). Idempotent: a second tick for the same timer finds nothing due and commits nothing,
   * so a timer delivered twice still changes the run once.
   */
  async function tick(runId: string): Promise<TickResult> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const run = await cache.load(runId);
      if (!run) return { committed: false, rev: null };
      const def = await cache.version(run.org, run.process, run.version);
      // A clock kept elsewhere (the shared manual clock) is read afresh: this replica may have missed
      // a move, and the scheduler ticks at the time it moved the clock to (issue #5).
      const now = clock.sync ? await clock.sync() : clock.now();
      const outcome = apply(run, { type: "tick" }, { actor: { kind: "server" }, now, def, config: settings });
      if (!outcome.changed) return { committed: false, rev: run.rev };
      const after: Run = { ...outcome.run, rev: run.rev + 1 };
      try {
        await store.commit({
          before: run,
          after,
          def,
          journal: {
            actor: "server",
            actorKind: "server",
            command: "tick",
            requestId: null,
            detail: { timers: firedTimers(outcome) },
          },
          idempotency: null,
          events: outcome.events,
          partitions: settings.partitions,
        });
      } catch (error) {
        cache.forget(runId); // lost fence, or a database failure with the commit's outcome unknown
        if (error instanceof FenceLost) continue;
        throw error;
      }
      cache.remember(after);
      counted(outcome);
      deps.committed();
      return { committed: true, rev: after.rev };
    }
    throw new RetryableError(`run ${runId} changed under this replica twice; retry`);
  }

  return {
    async write(env) {
      const p = env.payload;
      if (p.tool === "tick") return mutex.run(p.runId, () => tick(p.runId));
      const who = env.identity;
      if (!who) throw new Error("engine writes carry the caller's identity");
      if (p.tool === "start_run") return mutex.run(p.runId, () => start(who, p));
      // Takes the run's mutex itself, and lets go of it while an evaluator answers (check.md §3).
      return runCommand(who, p, env);
    },
  };
}

/** The command with the evaluator's answers to its check (check.md §3); only `submit` and `decide` carry a check. */
function withAnswers(command: Command, answers: CheckAnswers | undefined): Command {
  if (!answers || (command.type !== "submit" && command.type !== "decide")) return command;
  return { ...command, check: answers };
}
