// The scheduler service: timer delivery and the manual clock's admin calls, put together.
import {
  type Bus,
  type ClockReply,
  CONTRACTS,
  type Envelope,
  type SchedulerCall,
  type Subscription,
  serve,
} from "@baton/bus";
import type { Clock, ClockMover } from "@baton/clock";
import type { Db } from "@baton/db";
import type { Logger } from "@baton/kit";
import type { ToolResult } from "@baton/protocol";
import { createClockAdmin } from "./clock-admin.ts";
import { createDelivery } from "./delivery.ts";

/** How the scheduler runs (see `config.ts` for what each means). */
export interface SchedulerSettings {
  /** This replica's name, in its timer holds' tokens and in logs. */
  replicaId: string;
  /** Longest sleep between looks for due timers, ms. */
  pollMs: number;
  /** How long a take holds its rows while delivering them (its timer hold), ms of the database's clock. */
  holdMs: number;
  /**
   * How long a row whose tick changed nothing (or could not be delivered) is left alone before it is
   * taken again, ms of the database's clock.
   */
  backoffMs: number;
  /** Rows taken per round. */
  batch: number;
  /** Runs delivered to the engine at once. */
  concurrency: number;
  /** Deadline for delivering one run's tick, retries on no responders included, ms. */
  tickTimeoutMs: number;
  /**
   * How long one attempt of a tick waits before it is sent again (a tick is idempotent), ms;
   * default {@link DEFAULT_ATTEMPT_MS}.
   */
  attemptMs?: number;
  /** P virtual partitions (ARCHITECTURE rule 5): a tick goes to `engine.p<partitionOf(runId, P)>`. */
  partitions: number;
  /**
   * The organization whose operators may move a manual clock. The clock is one for the whole
   * deployment, so moving it changes every organization's leases, waits and deadlines; an operator
   * of another organization may read it but not move it.
   */
  clockOrg: string;
  /**
   * How long idempotency records are kept, ms of the deployment's clock (issue #13); default
   * {@link SCHEDULER_DEFAULTS}' (7 days).
   */
  idempotencyRetentionMs?: number;
  /** How often the prune of older ones runs, ms; default 10 minutes. */
  retentionIntervalMs?: number;
}

/**
 * Test hooks for the exactly-once tests (issue #5), wired by `start.ts` from `BATON_SCHEDULER_FAULT`
 * only. Each is called once, at most.
 */
export interface SchedulerFaults {
  /** Called right after the first take that held at least one due timer, before any delivery. */
  afterTake?: () => Promise<void>;
  /** Called right after the first take's ticks were sent, before any reply is awaited. */
  afterSend?: () => Promise<void>;
}

/** What the scheduler needs (CONVENTIONS: dependencies passed explicitly). */
export interface SchedulerDeps {
  db: Db;
  bus: Bus;
  /** The clock every service of the deployment reads. */
  clock: Clock;
  /** The handle that moves {@link clock}; `null` when the clock is real time (it cannot be moved). */
  mover: ClockMover | null;
  log: Logger;
  settings: SchedulerSettings;
  faults?: SchedulerFaults;
}

/** The outcome of {@link SchedulerService.settle}. */
export interface Settled {
  /**
   * Tick transitions this call's own deliveries committed. Not every timer applied meanwhile: other
   * replicas, the scheduler's loop and user writes apply timers too, and one tick may apply several.
   */
  ticks: number;
  /** Timers due by then that are still waiting (0: all applied). */
  pending: number;
}

/** The running scheduler. */
export interface SchedulerService {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Serves one {@link SchedulerCall} (exposed for in-process tests). */
  handle(env: Envelope<SchedulerCall>): Promise<ToolResult<ClockReply>>;
  /**
   * Applies every timer due at or before `dueBy` (epoch ms, injected clock), waiting for rows other
   * replicas hold, until none is left or the wall clock passes `deadline` (epoch ms); no delivery
   * waits past `deadline` either.
   */
  settle(dueBy: number, deadline: number): Promise<Settled>;
}

/**
 * The scheduler service (issue #5): delivers due timers to the engine partition that owns their run
 * (`delivery.ts`), and serves the manual clock's admin calls on the `scheduler` subject
 * (`clock-admin.ts`). With a manual clock, a move wakes the delivery loop.
 */
export function createScheduler(deps: SchedulerDeps): SchedulerService {
  const { bus, mover, log, settings } = deps;
  const delivery = createDelivery(deps);
  const { handle } = createClockAdmin({ ...deps, settle: delivery.settle });
  let sub: Subscription | null = null;
  let unwatch: (() => void) | null = null;

  return {
    handle,
    settle: delivery.settle,
    async start() {
      sub = serve(bus, CONTRACTS.scheduler, (_call, env) => handle(env), { log });
      unwatch = mover?.onChange(delivery.wake) ?? null;
      delivery.start();
      log.info({ replica: settings.replicaId, manualClock: mover !== null }, "scheduler started");
    },
    async stop() {
      // Stopped first, so an advance under way stops applying timers; then no more calls.
      const stopping = delivery.stop();
      unwatch?.();
      await sub?.stop();
      await stopping;
    },
  };
}
