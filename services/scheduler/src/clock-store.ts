import { type ClockMover, ManualClock, type ManualClockState, planAdvance } from "@baton/clock";
import { type Db, rowsOf, runs, settings } from "@baton/db";
import { iso } from "@baton/process";
import { eq, sql } from "drizzle-orm";

/**
 * The embedded server's manual clock (`baton dev --clock manual`), kept in the `settings` table so a
 * restart on the same data directory continues from the time it had reached: time never goes
 * backwards, and timers that fell due before a crash are applied on the next start.
 */

/** The `settings` key of the manual clock's state. */
export const MANUAL_CLOCK_KEY = "clock.manual";

/**
 * The stored manual clock (its time, epoch ms, and the advances a retry may repeat), or null when
 * this database never ran on a manual clock.
 */
export async function loadManualState(db: Db): Promise<ManualClockState | null> {
  const rows = await db
    .select({ value: settings.value })
    .from(settings)
    .where(eq(settings.key, MANUAL_CLOCK_KEY));
  const value = rows[0]?.value as { now?: unknown; requests?: unknown } | undefined;
  if (typeof value?.now !== "number" || !Number.isSafeInteger(value.now)) return null;
  const requests = Array.isArray(value.requests) ? (value.requests as ManualClockState["requests"]) : [];
  return { now: value.now, requests };
}

/** The stored manual time, epoch ms, or null when this database never ran on a manual clock. */
export async function loadManualTime(db: Db): Promise<number | null> {
  return (await loadManualState(db))?.now ?? null;
}

/** Stores the manual clock's state; the stored time is also readable as `at` (RFC 3339). */
export async function saveManualState(db: Db, state: ManualClockState): Promise<void> {
  const value = { now: state.now, at: iso(state.now), requests: state.requests };
  await db
    .insert(settings)
    .values({ key: MANUAL_CLOCK_KEY, value })
    .onConflictDoUpdate({ target: settings.key, set: { value } });
}

/**
 * The latest time the run data holds (the newest `runs.updated_at`, epoch ms), or null with no runs.
 * Every transition stamps its run with the clock it ran on, so a clock that starts here or later
 * never puts "now" before something that already happened.
 */
export async function latestDataTime(db: Db): Promise<number | null> {
  const result = await db.execute(sql`select max(${runs.updatedAt}) as latest from ${runs}`);
  const latest = rowsOf<{ latest: Date | string | null }>(result)[0]?.latest;
  return latest === null || latest === undefined ? null : new Date(latest).getTime();
}

/**
 * Opens the embedded manual clock. It starts at the stored time, or at the wall clock's time on a
 * database that never had one, but never before the latest time the run data holds: a data
 * directory used in real time after a manual session may hold runs stamped later than the stored
 * manual time, and the clock must not put them in the future (issue #5 review). The start is stored.
 * Returns the clock every service reads, the scheduler's {@link ClockMover} (which stores each new
 * time, and the request id of each advance that had one, before any service sees it; moves are
 * serialized), and `caughtUp`: the stored time the clock was moved past to reach the data, or null.
 */
export async function openManualClock(
  db: Db,
): Promise<{ clock: ManualClock; mover: ClockMover; caughtUp: number | null }> {
  const stored = await loadManualState(db);
  const latest = await latestDataTime(db);
  const base = stored?.now ?? Date.now();
  const start = Math.max(base, latest ?? base);
  let state: ManualClockState = { now: start, requests: stored?.requests ?? [] };
  if (stored === null || start !== stored.now) await saveManualState(db, state);
  const clock = new ManualClock(start);
  let chain: Promise<unknown> = Promise.resolve();
  const mover: ClockMover = {
    advance(ms, requestId) {
      const move = chain.then(async () => {
        const { next, move } = planAdvance(state, ms, requestId);
        if (next !== state) {
          await saveManualState(db, next);
          state = next;
          clock.set(next.now);
        }
        return move;
      });
      chain = move.catch(() => undefined);
      return move;
    },
    onChange: (listener) => clock.onChange(listener),
  };
  return { clock, mover, caughtUp: stored !== null && start > stored.now ? stored.now : null };
}
