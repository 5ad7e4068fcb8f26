import { type ClockMover, ManualClock } from "@baton/bus";
import { type Db, settings } from "@baton/db";
import { eq } from "drizzle-orm";

/**
 * The embedded server's manual clock (`baton dev --clock manual`), kept in the `settings` table so a
 * restart on the same data directory continues from the time it had reached: time never goes
 * backwards, and timers that fell due before a crash are applied on the next start.
 */

/** The `settings` key of the manual clock's time. */
export const MANUAL_CLOCK_KEY = "clock.manual";

/** The stored manual time, epoch ms, or null when this database never ran on a manual clock. */
export async function loadManualTime(db: Db): Promise<number | null> {
  const rows = await db
    .select({ value: settings.value })
    .from(settings)
    .where(eq(settings.key, MANUAL_CLOCK_KEY));
  const value = rows[0]?.value as { now?: unknown } | undefined;
  return typeof value?.now === "number" && Number.isSafeInteger(value.now) ? value.now : null;
}

/** Stores the manual time (epoch ms); the stored time is also readable as `at` (RFC 3339). */
export async function saveManualTime(db: Db, now: number): Promise<void> {
  const value = { now, at: new Date(now).toISOString() };
  await db
    .insert(settings)
    .values({ key: MANUAL_CLOCK_KEY, value })
    .onConflictDoUpdate({ target: settings.key, set: { value } });
}

/**
 * Opens the embedded manual clock: it starts at the stored time, or at the wall clock's time on a
 * database that never had one (and stores that). Returns the clock every service reads and the
 * scheduler's {@link ClockMover}, which stores each new time before any service sees it. Moves are
 * serialized.
 */
export async function openManualClock(db: Db): Promise<{ clock: ManualClock; mover: ClockMover }> {
  const stored = await loadManualTime(db);
  const clock = new ManualClock(stored ?? Date.now());
  if (stored === null) await saveManualTime(db, clock.now());
  let chain: Promise<unknown> = Promise.resolve();
  const mover: ClockMover = {
    advance(ms) {
      if (!Number.isSafeInteger(ms) || ms < 0)
        return Promise.reject(new RangeError("a clock only moves forward, by whole ms"));
      const move = chain.then(async () => {
        const next = clock.now() + ms;
        await saveManualTime(db, next);
        clock.set(next);
        return next;
      });
      chain = move.catch(() => undefined);
      return move;
    },
    onChange: (listener) => clock.onChange(listener),
  };
  return { clock, mover };
}
