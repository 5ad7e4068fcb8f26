// The engine service: its parts put together, and what it serves on the bus while it runs.
import { ClaimTokens } from "@baton/auth";
import {
  type Bus,
  CONTRACTS,
  call,
  type EngineRead,
  type EngineWrite,
  type Envelope,
  type HandlerReply,
  type Subscription,
  serve,
} from "@baton/bus";
import { ChatCompletionsEvaluator, type ChatCompletionsSettings, type Evaluator } from "@baton/check";
import type { Clock } from "@baton/clock";
import type { Db } from "@baton/db";
import type { EngineConfig } from "@baton/engine";
import { DEFAULT_ATTEMPT_MS, type Logger, partitionsOwned } from "@baton/kit";
import { type FileCheck, type Identity, partitionOf } from "@baton/protocol";
import { CheckAsker } from "./checks.ts";
import { serveJournalReads } from "./journal.ts";
import { OutboxRelay } from "./outbox.ts";
import type { PartitionOwnership } from "./partitions/ownership.ts";
import { createReads } from "./reads.ts";
import { serveCheckReports } from "./report.ts";
import { RunCache } from "./run-cache.ts";
import { EngineStore } from "./store.ts";
import { createWritePath } from "./write-path.ts";

/** What the engine service needs (CONVENTIONS: dependencies passed explicitly). */
export interface EngineDeps {
  db: Db;
  bus: Bus;
  clock: Clock;
  log: Logger;
  /** Which partitions this replica serves: all of them (`baton dev`), or those it holds in NATS KV. */
  ownership: PartitionOwnership;
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
    /** How long idempotency records are kept, ms (`BATON_IDEMPOTENCY_RETENTION_HOURS`; default 7 days). */
    idempotencyRetentionMs?: number;
    /**
     * The check profile's evaluator (`BATON_CHECK_*`, check.md §3): an OpenAI-compatible
     * chat-completions server. Null or absent: none, so a check answers `error`.
     */
    evaluator?: ChatCompletionsSettings | null;
  };
  /** An evaluator to use instead of the one `settings.evaluator` describes (tests of other evaluators). */
  evaluator?: Evaluator;
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
 * It serves `engine.p<k>` for each partition k its {@link PartitionOwnership} gives it (`write-path.ts`),
 * and `engine.read`, `engine.journal` and `engine.report` on any replica (`reads.ts`, `journal.ts`,
 * `report.ts`); the outbox
 * relay publishes each commit's domain events.
 */
export function createEngine(deps: EngineDeps): EngineService {
  const { db, bus, clock, log, settings } = deps;
  const store = new EngineStore(db);
  const cache = new RunCache(store, settings.cacheSize);
  const relay = new OutboxRelay({ db, bus, clock, log });
  const subscriptions = new Map<number, Subscription>();
  let readSub: Subscription | null = null;
  let journalSub: Subscription | null = null;
  let reportSub: Subscription | null = null;

  /** The evidence service's check of `file` refs (§5); a read, so sent again when an attempt gets no answer. */
  async function verifyFiles(
    who: Identity,
    refs: string[],
    on: { deadline: number; trace?: string | undefined },
  ): Promise<Map<string, FileCheck>> {
    if (refs.length === 0) return new Map();
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

  const evaluator =
    deps.evaluator ?? (settings.evaluator ? new ChatCompletionsEvaluator(settings.evaluator) : null);
  const { write } = createWritePath({
    store,
    cache,
    clock,
    tokens: new ClaimTokens(settings.secret),
    settings,
    verifyFiles,
    checks: new CheckAsker(evaluator, log),
    committed: () => relay.kick(),
  });
  const { read } = createReads({ db, store, cache, clock, settings });

  /** Serves partition `p`'s writes: only its owner may write its runs (ARCHITECTURE rule 5). */
  function servePartition(p: number): Subscription {
    return serve(
      bus,
      CONTRACTS.engineWrite,
      async (request, env) => {
        // A write for another partition means the sender counts partitions differently: refuse it
        // loudly rather than serve a run this replica does not own.
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
    );
  }

  return {
    write,
    read,
    async start() {
      await deps.ownership.start(
        async (p) => {
          subscriptions.set(p, servePartition(p));
          partitionsOwned.inc();
        },
        async (p) => {
          await subscriptions.get(p)?.stop();
          if (subscriptions.delete(p)) partitionsOwned.dec();
          cache.forgetPartition(p, settings.partitions);
        },
      );
      // Reads last: a replica answering reads already serves its partitions' writes.
      readSub = serve(bus, CONTRACTS.engineRead, (_request, env) => read(env), { log });
      journalSub = serveJournalReads(bus, db, log);
      reportSub = serveCheckReports(bus, db, log);
      relay.start();
      log.info({ partitions: settings.partitions }, "engine started");
    },
    async stop() {
      await deps.ownership.stop();
      await readSub?.stop();
      await journalSub?.stop();
      await reportSub?.stop();
      await relay.stop();
    },
  };
}
