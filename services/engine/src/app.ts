import { ClaimTokens } from "@baton/auth";
import {
  type Bus,
  CONTRACTS,
  call,
  type EngineRead,
  type EngineWrite,
  type Envelope,
  type HandlerReply,
  RetryableError,
  type Subscription,
  serve,
  type TickResult,
} from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Db } from "@baton/db";
import {
  type Actor,
  apply,
  type Command,
  claimResult,
  type EngineConfig,
  fileRefsOf,
  iso,
  type Outcome,
  type PublishedProcess,
  type Run,
  runAt,
  runView,
  startRun,
} from "@baton/engine";
import { DEFAULT_ATTEMPT_MS, type Logger } from "@baton/kit";
import {
  type FileCheck,
  fail,
  type Identity,
  ok,
  type ProtocolError,
  partitionOf,
  protocolError,
  requestFingerprint,
  type ToolResult,
} from "@baton/protocol";
import { serveJournalReads } from "./journal.ts";
import { KeyedMutex } from "./keyed-mutex.ts";
import { OutboxRelay } from "./outbox.ts";
import type { Ownership } from "./partitions/ownership.ts";
import { agentWork, listRuns, personWork } from "./reads.ts";
import { EngineStore, FenceLost, IdempotencyConflict } from "./store.ts";

/**
 * The timers a transition applied, for its journal entry (issue #5: "the journal shows one
 * transition per timer"): every fired timer appears in exactly one entry, with its own time.
 */
function firedTimers(outcome: Outcome): { kind: string; stepId: string; at: string }[] {
  return outcome.fired.map((t) => ({ kind: t.kind, stepId: t.stepId, at: iso(t.at) }));
}

/** What the engine service needs (CONVENTIONS: dependencies passed explicitly). */
export interface EngineDeps {
  db: Db;
  bus: Bus;
  clock: Clock;
  log: Logger;
  ownership: Ownership;
  settings: EngineConfig & {
    /** P virtual partitions (ARCHITECTURE rule 5). */
    partitions: number;
    /** The server secret claim tokens are derived from. */
    secret: string;
    /** How long to wait for the evidence service when verifying file refs, ms. */
    callTimeoutMs: number;
    /** How long one attempt of that call waits before it is sent again, ms (default {@link DEFAULT_ATTEMPT_MS}). */
    attemptMs?: number;
    /** Hot runs kept in memory per replica. */
    cacheSize?: number;
  };
}

/** The running engine service. */
export interface EngineService {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Handles one write to a run (exposed for in-process tests). */
  write(env: Envelope<EngineWrite>): Promise<HandlerReply<typeof CONTRACTS.engineWrite>>;
  read(env: Envelope<EngineRead>): Promise<HandlerReply<typeof CONTRACTS.engineRead>>;
}

/**
 * The engine shell (ARCHITECTURE rule 1): decode, load, call the pure core, commit, publish, reply.
 * Writes to one run are serialized in this replica by a per-run mutex and fenced across replicas by
 * the run's `rev`; a write's reply is sent only after its commit (§4).
 */
export function createEngine(deps: EngineDeps): EngineService {
  const { db, bus, clock, log, settings } = deps;
  const store = new EngineStore(db);
  const tokens = new ClaimTokens(settings.secret);
  const mutex = new KeyedMutex();
  const relay = new OutboxRelay(db, bus, clock, log);
  const cache = new Map<string, Run>();
  const cacheSize = settings.cacheSize ?? 10_000;
  const versions = new Map<string, PublishedProcess>();
  const subscriptions = new Map<number, Subscription>();
  let readSub: Subscription | null = null;
  let journalSub: Subscription | null = null;

  const remember = (run: Run) => {
    cache.delete(run.id);
    cache.set(run.id, run);
    if (cache.size > cacheSize) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
  };

  async function loadRun(runId: string): Promise<Run | null> {
    const hot = cache.get(runId);
    if (hot) return hot;
    const run = await store.loadRun(runId);
    if (run) remember(run);
    return run;
  }

  async function version(org: string, name: string, v: number): Promise<PublishedProcess> {
    const key = `${org}\n${name}\n${v}`;
    let def = versions.get(key);
    if (!def) {
      const loaded = await store.loadVersion(org, name, v);
      if (!loaded) throw new Error(`run pins ${name} v${v}, which is not in the registry`);
      def = loaded;
      versions.set(key, def);
    }
    return def;
  }

  const fingerprint = requestFingerprint;

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

  async function resolveFiles(
    who: Identity,
    refs: string[],
    on: { deadline: number; trace?: string | undefined },
  ): Promise<Map<string, FileCheck>> {
    if (refs.length === 0) return new Map();
    // A read: sent again to another evidence replica when one attempt gets no answer.
    const reply = await call(
      bus,
      CONTRACTS.evidence,
      { op: "verify", refs },
      {
        identity: who,
        deadline: Math.min(on.deadline, Date.now() + settings.callTimeoutMs),
        attemptMs: settings.attemptMs ?? DEFAULT_ATTEMPT_MS,
        trace: on.trace,
      },
    );
    return new Map(Object.entries(reply));
  }

  function resultOf(outcome: Outcome, def: PublishedProcess, now: number): ToolResult<unknown> {
    const run = outcome.run;
    const value = outcome.value;
    if (!value) throw new Error("no value on success");
    switch (value.kind) {
      case "view":
        return ok(runView(run, def, now));
      case "claim":
        return ok(claimResult(run, def, value, tokens.mint(run.id, value.claimId)));
      case "renew":
        return ok({ token: tokens.mint(run.id, value.claimId), expiresAt: iso(value.expiresAt) });
      case "send_event":
        return ok({ consumedBy: value.consumedBy });
      case "none":
        return ok(null);
      default: {
        const unreachable: never = value;
        throw new Error(`unknown value ${JSON.stringify(unreachable)}`);
      }
    }
  }

  function toCommand(p: EngineWrite): Command {
    switch (p.tool) {
      case "claim":
        return { type: "claim", stepId: p.args.stepId };
      case "renew":
        return {
          type: "renew",
          claimId: p.claimId,
          ...(p.args.progress !== undefined ? { progress: p.args.progress } : {}),
        };
      case "submit": {
        const { token: _t, requestId: _r, ...rest } = p.args;
        return { type: "submit", claimId: p.claimId, ...rest };
      }
      case "escalate":
        return { type: "escalate", claimId: p.claimId, note: p.args.note };
      case "decide": {
        const { runId: _run, requestId: _r, ...rest } = p.args;
        return { type: "decide", ...rest };
      }
      case "cancel":
        return { type: "cancel", reason: p.args.reason };
      case "send_event":
        return {
          type: "send_event",
          name: p.args.name,
          ...(p.args.data !== undefined ? { data: p.args.data } : {}),
        };
      case "start_run":
      case "tick":
        throw new Error(`${p.tool} is not a run command`);
      default: {
        const unreachable: never = p;
        throw new Error(`unknown tool ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** Commits, retrying once on a lost fence after reloading (another replica wrote during a hand-over). */
  async function commitOrReplay(
    who: Identity,
    requestId: string,
    fp: string,
    before: Run | null,
    outcome: Outcome,
    def: PublishedProcess,
    tool: string,
    args: Record<string, unknown>,
    result: ToolResult<unknown> | null,
  ): Promise<ToolResult<unknown> | "fence"> {
    const after: Run = { ...outcome.run, rev: (before?.rev ?? 0) + 1 };
    const { token: _token, contentBase64: _bytes, ...journalArgs } = args;
    try {
      await store.commit({
        before,
        after,
        def,
        journal: {
          actor: who.id,
          actorKind: who.kind,
          command: tool,
          requestId,
          detail: { args: journalArgs, error: outcome.error?.code ?? null, timers: firedTimers(outcome) },
        },
        idempotency: result ? { requestId, tool, fingerprint: fp, result } : null,
        events: outcome.events,
        partitions: settings.partitions,
      });
    } catch (error) {
      if (error instanceof IdempotencyConflict) {
        return (
          (await replay(who, requestId, fp)) ??
          fail(protocolError("retry", "try again with the same requestId"))
        );
      }
      if (error instanceof FenceLost) {
        cache.delete(after.id);
        return "fence";
      }
      // The database failed (a dropped connection, a fail-over): the commit may or may not have
      // been applied, so the cached run is not to be trusted. The next write reloads it; a retry of
      // this one is then replayed from its idempotency record or fenced by the run's rev.
      cache.delete(after.id);
      throw error;
    }
    remember(after);
    relay.kick();
    return result ?? fail(outcome.error as ProtocolError);
  }

  async function runCommand(
    who: Identity,
    p: Exclude<EngineWrite, { tool: "start_run" | "tick" }>,
    on: { deadline: number; trace?: string | undefined },
  ) {
    const args: Record<string, unknown> = p.args;
    const requestId = p.args.requestId;
    const fp = fingerprint(p.tool, args, who);
    const command = toCommand(p);
    for (let attempt = 0; attempt < 2; attempt++) {
      const run = await loadRun(p.runId);
      if (!run || run.org !== who.org) {
        return fail(protocolError("not_found", `no run ${p.runId} in your organization`));
      }
      const def = await version(run.org, run.process, run.version);
      const files = await resolveFiles(who, fileRefsOf(command), on);
      const now = clock.now();
      const outcome = apply(run, command, { actor: who as Actor, now, def, config: settings, files });
      if (outcome.error) {
        const replayed = await replay(who, requestId, fp);
        if (replayed) return replayed;
        if (!outcome.changed) return fail(outcome.error);
        const committed = await commitOrReplay(who, requestId, fp, run, outcome, def, p.tool, args, null);
        if (committed === "fence") continue;
        return committed;
      }
      const result = resultOf(outcome, def, now);
      const committed = await commitOrReplay(who, requestId, fp, run, outcome, def, p.tool, args, result);
      if (committed === "fence") continue;
      return committed;
    }
    throw new RetryableError(`run ${p.runId} changed under this replica twice; retry`);
  }

  async function start(
    who: Identity,
    p: Extract<EngineWrite, { tool: "start_run" }>,
  ): Promise<ToolResult<unknown>> {
    const args: Record<string, unknown> = p.args;
    const fp = fingerprint("start_run", args, who);
    const existing = await loadRun(p.runId);
    if (existing) {
      return (
        (await replay(who, p.args.requestId, fp)) ??
        fail(
          protocolError("conflict", `requestId ${p.args.requestId} was already used; send a new requestId`),
        )
      );
    }
    const def = await store.loadVersion(who.org, p.args.process, p.args.version);
    if (!def) {
      const replayed = await replay(who, p.args.requestId, fp);
      if (replayed) return replayed;
      return fail(
        protocolError(
          "not_found",
          p.args.version === undefined
            ? `no published process ${p.args.process} in your organization`
            : `no version ${p.args.version} of ${p.args.process} in your organization`,
        ),
      );
    }
    const now = clock.now();
    const outcome = startRun(
      { runId: p.runId, inputs: p.args.inputs, mode: p.args.mode ?? "live" },
      {
        actor: who,
        now,
        def,
        config: settings,
      },
    );
    if ("error" in outcome && !("run" in outcome)) {
      return (await replay(who, p.args.requestId, fp)) ?? fail(outcome.error);
    }
    const o = outcome as Outcome;
    const result = ok(runView(o.run, def, now));
    const committed = await commitOrReplay(
      who,
      p.args.requestId,
      fp,
      null,
      o,
      def,
      "start_run",
      args,
      result,
    );
    if (committed === "fence") throw new RetryableError(`run ${p.runId} was created concurrently; retry`);
    return committed;
  }

  /**
   * Applies a run's due timers (lease expiry, waits, time-outs, `due`) as an ordinary transition
   * (issue #5). Idempotent: a second tick for the same timer finds nothing due and commits nothing,
   * so a timer delivered twice still changes the run once.
   */
  async function tick(runId: string): Promise<TickResult> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const run = await loadRun(runId);
      if (!run) return { committed: false, rev: null };
      const def = await version(run.org, run.process, run.version);
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
        cache.delete(runId); // lost fence, or a database failure with the commit's outcome unknown
        if (error instanceof FenceLost) continue;
        throw error;
      }
      remember(after);
      relay.kick();
      return { committed: true, rev: after.rev };
    }
    throw new RetryableError(`run ${runId} changed under this replica twice; retry`);
  }

  async function write(env: Envelope<EngineWrite>): Promise<HandlerReply<typeof CONTRACTS.engineWrite>> {
    const p = env.payload;
    if (p.tool === "tick") return mutex.run(p.runId, () => tick(p.runId));
    const who = env.identity;
    if (!who) throw new Error("engine writes carry the caller's identity");
    return mutex.run(p.runId, () => (p.tool === "start_run" ? start(who, p) : runCommand(who, p, env)));
  }

  async function read(env: Envelope<EngineRead>): Promise<HandlerReply<typeof CONTRACTS.engineRead>> {
    const who = env.identity;
    if (!who) throw new Error("engine reads carry the caller's identity");
    const p = env.payload;
    const now = clock.now();
    switch (p.tool) {
      case "get_run": {
        const run = cache.get(p.args.runId) ?? (await store.loadRun(p.args.runId));
        if (!run || run.org !== who.org)
          return fail(protocolError("not_found", `no run ${p.args.runId} in your organization`));
        const def = await version(run.org, run.process, run.version);
        return ok(runView(runAt(run, def, settings, now), def, now));
      }
      case "get_work": {
        const page =
          who.kind === "agent"
            ? await agentWork(db, who, p.args, now)
            : await personWork(db, who, p.args, settings.operatorGroup);
        return "code" in page ? fail(page) : ok(page);
      }
      case "list_runs": {
        const page = await listRuns(db, who, p.args);
        return "code" in page ? fail(page) : ok(page);
      }
      default: {
        const unreachable: never = p;
        throw new Error(`unknown read ${JSON.stringify(unreachable)}`);
      }
    }
  }

  return {
    write,
    read,
    async start() {
      await deps.ownership.start(
        async (p) => {
          subscriptions.set(
            p,
            serve(
              bus,
              CONTRACTS.engineWrite,
              async (request, env) => {
                // Only the partition's owner may write its runs (ARCHITECTURE rule 5). A write for
                // another partition means the sender counts partitions differently: refuse it loudly
                // rather than serve a run this replica does not own.
                const owner = partitionOf(request.runId, settings.partitions);
                if (owner !== p) {
                  log.error(
                    { runId: request.runId, subject: p, owner },
                    "write on the wrong partition; BATON_PARTITIONS differs between services",
                  );
                  throw new Error(
                    `run ${request.runId} belongs to partition ${owner}, not ${p}: BATON_PARTITIONS must be the same on every service`,
                  );
                }
                return write(env);
              },
              { log, partition: p },
            ),
          );
        },
        async (p) => {
          await subscriptions.get(p)?.stop();
          subscriptions.delete(p);
          for (const id of [...cache.keys()])
            if (partitionOf(id, settings.partitions) === p) cache.delete(id);
        },
      );
      // Reads last: a replica answering reads already serves its partitions' writes.
      readSub = serve(bus, CONTRACTS.engineRead, (_request, env) => read(env), { log });
      journalSub = serveJournalReads(bus, db, log);
      relay.start();
      log.info({ partitions: settings.partitions }, "engine started");
    },
    async stop() {
      await deps.ownership.stop();
      await readSub?.stop();
      await journalSub?.stop();
      await relay.stop();
    },
  };
}
