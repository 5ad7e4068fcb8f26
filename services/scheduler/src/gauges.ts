// The scheduler's gauges (issue #13): due timers, their lag and overdue steps, read from PostgreSQL when scraped.
import type { Clock } from "@baton/clock";
import { type Db, rowsOf } from "@baton/db";
import { onScrape, stepsOverdue, timerLag, timersDue } from "@baton/kit";
import { sql } from "drizzle-orm";

/**
 * Before each scrape of `/metrics`, reads from PostgreSQL, at the deployment's clock's now:
 * `baton_timers_due` (timers whose fire time has passed: delivered ones are deleted by their tick),
 * `baton_timer_lag_seconds` (how long ago the oldest of them fell due) and `baton_steps_overdue`
 * (agent steps ready or claimed, and open work items, past their `due`). Three small statements
 * per scrape, never on a call's path. Every scheduler replica reports the same values (alert on
 * their `max`). Returns a function that stops it.
 */
export function reportDueWork(db: Db, clock: Clock): () => void {
  return onScrape(async () => {
    const now = new Date(clock.now()).toISOString();
    const [timers] = rowsOf<{ due: string | number; oldest: string | Date | null }>(
      await db.execute(
        sql`select count(*) as due, min(fire_at) as oldest from timers where fire_at <= ${now}::timestamptz`,
      ),
    );
    const [steps] = rowsOf<{ n: string | number }>(
      await db.execute(sql`select
        (select count(*) from ready_steps where due_at < ${now}::timestamptz)
        + (select count(*) from work_items where item->>'due' is not null and (item->>'due')::timestamptz < ${now}::timestamptz)
        as n`),
    );
    timersDue.set(Number(timers?.due ?? 0));
    const oldest = timers?.oldest ? new Date(timers.oldest).getTime() : null;
    timerLag.set(oldest === null ? 0 : Math.max(0, (clock.now() - oldest) / 1000));
    stepsOverdue.set(Number(steps?.n ?? 0));
  });
}
