// Timer delivery: due timers taken from PostgreSQL and ticked to the engine partition owning each run.
import { randomUUID } from "node:crypto";
import { CONTRACTS, call } from "@baton/bus";
import { rowsOf, timers } from "@baton/db";
import { DEFAULT_ATTEMPT_MS, ServiceLoop } from "@baton/kit";
import { partitionOf } from "@baton/protocol";
import { sql } from "drizzle-orm";
import type { SchedulerDeps, Settled } from "./app.ts";

type Delivery = "committed" | "unchanged" | "failed";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The running delivery loop, and a way to apply what is due now. */
export interface TimerDelivery {
  /** Starts the loop that delivers due timers until {@link stop}. */
  start(): void;
  /** Wakes the loop now (the manual clock moved). */
  wake(): void;
  /** Stops the loop; resolves when its round in progress is done. */
  stop(): Promise<void>;
  /** See {@link SchedulerService.settle}. */
  settle(dueBy: number, deadline: number): Promise<Settled>;
}

/**
 * Delivers due timers to the engine partition that owns their run (issue #5).
 *
 * The engine derives a run's timers from its state and keeps the `timers` table equal to them in
 * every transition's commit; a `tick` write applies whatever is due at the engine's clock and is
 * idempotent. So the scheduler only has to deliver each due timer at least once, and the engine makes
 * it fire exactly once:
 *
 * 1. **Take**: one short statement takes up to `batch` due rows no replica holds, with
 *    `FOR UPDATE SKIP LOCKED`, and stamps them with this replica's *timer hold*: until when, on the
 *    database's clock (`claimed_until = clock_timestamp() + holdMs`), and a token (`claim_token`;
 *    the columns keep their first names). No row lock outlives the statement: the engine's commit
 *    deletes those rows while the tick runs.
 * 2. **Deliver**: one `tick` per run to `engine.p<partitionOf(runId, P)>`, retried while no replica
 *    serves the partition (a hand-over), until the tick deadline (never past the caller's).
 * 3. **Release the holds**: a run whose tick committed is released (a row still there is taken
 *    again). A run whose tick changed nothing (the engine's clock is behind the scheduler's) or
 *    failed stays held for `backoffMs` more, so it is not taken again at once. A replica that dies
 *    between take and release leaves its holds to expire after `holdMs`; then another replica
 *    takes the rows again, and a tick the dead replica did send finds nothing left to do.
 *
 * Wake-ups: with real time, at the next fire time, at most `pollMs` apart; with a manual clock,
 * whenever it moves ({@link TimerDelivery.wake}), and every `pollMs`.
 */
export function createDelivery(deps: SchedulerDeps): TimerDelivery {
  const { db, bus, clock, mover, log, settings, faults } = deps;
  let tookOnce = false;
  let sentOnce = false;

  const ms = (n: number) => sql`(${n}::double precision * interval '1 millisecond')`;

  /**
   * Holds up to `batch` due rows no live timer hold has; returns their run ids and the hold's token.
   * Holds are measured by the database's clock, so every replica agrees when one ends whatever its
   * own host's clock says.
   */
  async function take(dueBy: number): Promise<{ token: string; runIds: string[] }> {
    const token = `${settings.replicaId}/${randomUUID()}`;
    const result = await db.execute(sql`
      with due as (
        select run_id, kind, step_id from ${timers}
        where fire_at <= ${new Date(dueBy)}
          and (claimed_until is null or claimed_until <= clock_timestamp())
        order by fire_at, run_id, kind, step_id
        limit ${settings.batch}
        for update skip locked
      )
      update ${timers} as t
      set claimed_until = clock_timestamp() + ${ms(settings.holdMs)}, claim_token = ${token}
      from due
      where t.run_id = due.run_id and t.kind = due.kind and t.step_id = due.step_id
      returning t.run_id`);
    return { token, runIds: rowsOf<{ run_id: string }>(result).map((r) => r.run_id) };
  }

  /** Ends this take's holds on `runIds` (`backoff`: keeps them `backoffMs` longer instead). */
  async function release(token: string, runIds: string[], backoff: boolean): Promise<void> {
    if (runIds.length === 0) return;
    const ids = sql.join(
      runIds.map((id) => sql`${id}`),
      sql`, `,
    );
    await db.execute(
      backoff
        ? sql`update ${timers} set claimed_until = clock_timestamp() + ${ms(settings.backoffMs)}
              where claim_token = ${token} and run_id in (${ids})`
        : sql`update ${timers} set claimed_until = null, claim_token = null
              where claim_token = ${token} and run_id in (${ids})`,
    );
  }

  async function deliver(runId: string, by: number): Promise<Delivery> {
    // Routed by the configured P, not the row's stored partition: rows written before P changed
    // would otherwise go to a partition nobody serves any more.
    const partition = partitionOf(runId, settings.partitions);
    const deadline = Math.min(Date.now() + settings.tickTimeoutMs, by);
    try {
      const reply = await call(
        bus,
        CONTRACTS.engineWrite,
        { tool: "tick", runId },
        { identity: null, deadline, partition, attemptMs: settings.attemptMs ?? DEFAULT_ATTEMPT_MS },
      );
      return reply.committed ? "committed" : "unchanged";
    } catch (error) {
      log.warn({ runId, partition, err: String(error) }, "tick not delivered; retrying after a back-off");
      return "failed";
    }
  }

  /** Delivers one take's runs, `concurrency` at a time, until `by` at the latest; returns the outcomes. */
  async function deliverAll(token: string, runIds: string[], by: number): Promise<Map<string, Delivery>> {
    const runs = [...new Set(runIds)];
    const outcomes = new Map<string, Delivery>();
    let next = 0;
    const worker = async () => {
      while (next < runs.length) {
        const runId = runs[next++] as string;
        outcomes.set(runId, await deliver(runId, by));
      }
    };
    const workers = Array.from({ length: Math.min(settings.concurrency, runs.length) }, worker);
    if (faults?.afterSend && !sentOnce) {
      // Every worker has asked for its first tick synchronously before its first await; the bus
      // writes them in this iteration's turn, and the fault's flush waits for that turn.
      sentOnce = true;
      await faults.afterSend();
    }
    await Promise.all(workers);
    const done = [...outcomes].filter(([, o]) => o === "committed").map(([id]) => id);
    const later = [...outcomes].filter(([, o]) => o !== "committed").map(([id]) => id);
    await release(token, done, false);
    // A tick that changed nothing means the engine's clock has not reached the fire time yet (or the
    // engine is unreachable): taking the row again at once would spin; leave it for a back-off.
    await release(token, later, true);
    return outcomes;
  }

  /**
   * Takes and delivers until nothing due at `dueBy` is free to take, or the wall clock passes `by`;
   * returns the ticks that committed.
   */
  async function pass(dueBy: number, by: number): Promise<number> {
    let committed = 0;
    while (Date.now() < by) {
      const { token, runIds } = await take(dueBy);
      if (runIds.length === 0) return committed;
      if (faults?.afterTake && !tookOnce) {
        tookOnce = true;
        await faults.afterTake();
      }
      const outcomes = await deliverAll(token, runIds, by);
      const count = (o: Delivery) => [...outcomes.values()].filter((v) => v === o).length;
      committed += count("committed");
      log.debug(
        {
          replica: settings.replicaId,
          taken: runIds.length,
          committed: count("committed"),
          unchanged: count("unchanged"),
          failed: count("failed"),
        },
        "took due timers",
      );
      if (runIds.length < settings.batch) return committed;
    }
    return committed;
  }

  async function countDue(dueBy: number): Promise<number> {
    const result = await db.execute(
      sql`select count(*)::int as n from ${timers} where fire_at <= ${new Date(dueBy)}`,
    );
    return Number(rowsOf<{ n: number | string }>(result)[0]?.n ?? 0);
  }

  async function settle(dueBy: number, deadline: number): Promise<Settled> {
    let ticks = 0;
    let idle = 0;
    for (;;) {
      const committed = await pass(dueBy, deadline);
      ticks += committed;
      const pending = await countDue(dueBy);
      if (pending === 0 || loop.stopped) return { ticks, pending };
      if (Date.now() >= deadline) return { ticks, pending };
      // What is left is held by another replica, or backed off (not due on the engine's clock yet).
      idle = committed > 0 ? 0 : idle + 1;
      await sleep(Math.min(10 * 2 ** Math.min(idle, 6), 250, Math.max(deadline - Date.now(), 1)));
    }
  }

  /** How long to sleep before the next look: until the next fire time, capped by `pollMs`. */
  async function nextDelay(): Promise<number> {
    if (mover) return settings.pollMs;
    const result = await db.execute(sql`
      select min(fire_at) as next from ${timers}
      where claimed_until is null or claimed_until <= clock_timestamp()`);
    const next = rowsOf<{ next: Date | string | null }>(result)[0]?.next;
    if (next === null || next === undefined) return settings.pollMs;
    const delay = new Date(next).getTime() - clock.now();
    return Math.min(Math.max(delay, 20), settings.pollMs);
  }

  /** One round of the loop: deliver what is due now; returns how long to sleep, ms. */
  async function round(): Promise<number> {
    try {
      const committed = await pass(clock.now(), Number.POSITIVE_INFINITY);
      if (committed > 0) log.info({ replica: settings.replicaId, committed }, "due timers applied");
      return await nextDelay();
    } catch (error) {
      log.warn({ err: String(error) }, "scheduler round failed");
      return settings.pollMs;
    }
  }

  const loop = new ServiceLoop(round);
  return {
    start: () => loop.start(),
    wake: () => loop.wake(),
    stop: () => loop.stop(),
    settle,
  };
}
