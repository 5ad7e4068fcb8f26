// The manual clock's admin calls (issue #5): read the time; move it, then apply every timer that fell due.
import type { ClockReply, Envelope, SchedulerCall } from "@baton/bus";
import { AdvanceConflict, type ClockMove, type ClockMover } from "@baton/clock";
import { rowsOf, runJournal } from "@baton/db";
import { iso } from "@baton/process";
import { fail, ok, protocolError, type ToolResult } from "@baton/protocol";
import { sql } from "drizzle-orm";
import type { SchedulerDeps, Settled } from "./app.ts";

/** The longest manual-clock step one call accepts: 100 years, far inside what a `Date` holds. */
const MAX_ADVANCE_MS = 100 * 365 * 24 * 3_600_000;

/** Time an `advance` keeps for its reply to reach the caller before the caller's deadline, ms. */
const REPLY_MARGIN_MS = 1_000;

/**
 * Answers the `scheduler` subject (bus catalog {@link SchedulerCall}), operators only: `now` reads
 * the clock; `advance` moves a manual clock (only operators of `settings.clockOrg`; `conflict` on
 * real time) and then applies, with `settle`, every timer that fell due before replying.
 */
export function createClockAdmin(
  deps: Pick<SchedulerDeps, "db" | "clock" | "mover" | "log" | "settings"> & {
    settle: (dueBy: number, deadline: number) => Promise<Settled>;
  },
): { handle(env: Envelope<SchedulerCall>): Promise<ToolResult<ClockReply>> } {
  const { db, clock, mover, log, settings, settle } = deps;

  /**
   * Timers with a fire time in (`from`, `to`] (epoch ms) that journal entries show applied. A
   * transition that applied one ran at or after its fire time, hence after `from`: only entries
   * stamped after `from` are read.
   */
  async function countApplied(from: number, to: number): Promise<number> {
    if (to <= from) return 0;
    const result = await db.execute(sql`
      select count(*)::int as n
      from ${runJournal} j
      cross join lateral jsonb_array_elements(
        case when jsonb_typeof(j.detail->'timers') = 'array' then j.detail->'timers' else '[]'::jsonb end
      ) as t(timer)
      where j.at > ${new Date(from)}
        and (t.timer->>'at')::timestamptz > ${new Date(from)}
        and (t.timer->>'at')::timestamptz <= ${new Date(to)}`);
    return Number(rowsOf<{ n: number | string }>(result)[0]?.n ?? 0);
  }

  async function advance(
    moving: ClockMover,
    p: Extract<SchedulerCall, { op: "advance" }>,
    callDeadline: number,
  ): Promise<ToolResult<ClockReply>> {
    const ms = p.ms;
    if (ms === null || !Number.isSafeInteger(ms) || ms < 0 || ms > MAX_ADVANCE_MS) {
      return fail(
        protocolError("invalid", "advance the clock by a whole number of milliseconds", [
          `ms: expected a whole number from 0 to ${MAX_ADVANCE_MS}`,
        ]),
      );
    }
    const requestId = p.requestId;
    if (
      requestId !== undefined &&
      (typeof requestId !== "string" || requestId.length < 1 || requestId.length > 200)
    ) {
      return fail(
        protocolError("invalid", "requestId must be a string of 1 to 200 characters", [
          "requestId: expected a string of 1 to 200 characters",
        ]),
      );
    }
    let move: ClockMove;
    try {
      if (ms === 0 && requestId === undefined) {
        const now = (await clock.sync?.()) ?? clock.now();
        move = { from: now, to: now, replayed: false };
      } else {
        move = await moving.advance(ms, requestId);
      }
    } catch (error) {
      if (error instanceof AdvanceConflict) return fail(protocolError("conflict", error.message));
      throw error;
    }
    // Leave the caller time to receive the reply before its own deadline.
    const deadline = Math.max(callDeadline - REPLY_MARGIN_MS, Date.now() + 100);
    let pending: number;
    try {
      ({ pending } = await settle(move.to, deadline));
    } catch (error) {
      // The clock has moved; an error here must not read as "nothing happened". Report work left, so
      // the caller sends the same advance again (its requestId keeps the clock from moving twice).
      log.warn({ err: String(error) }, "applying due timers after an advance failed");
      pending = 1;
    }
    const applied = await countApplied(move.from, move.to);
    log.info(
      { from: iso(move.from), to: iso(move.to), replayed: move.replayed, applied, pending },
      "clock advanced",
    );
    return ok({ now: iso(move.to), from: iso(move.from), manual: true, applied, pending });
  }

  async function handle(env: Envelope<SchedulerCall>): Promise<ToolResult<ClockReply>> {
    if (!env.identity?.operator) {
      return fail(protocolError("forbidden", "the clock is moved by operators only"));
    }
    const p = env.payload;
    switch (p.op) {
      case "now":
        return ok({ now: iso((await clock.sync?.()) ?? clock.now()), manual: mover !== null });
      case "advance": {
        if (env.identity.org !== settings.clockOrg) {
          return fail(
            protocolError(
              "forbidden",
              `the clock is shared by every organization on this server; only operators of ${JSON.stringify(settings.clockOrg)} (BATON_CLOCK_ORG) move it`,
            ),
          );
        }
        if (!mover) {
          return fail(
            protocolError(
              "conflict",
              "the clock is real time; start Baton with --clock manual (BATON_CLOCK=manual) to move it",
            ),
          );
        }
        return advance(mover, p, env.deadline);
      }
      default: {
        const unreachable: never = p;
        return fail(protocolError("invalid", `unknown scheduler call ${JSON.stringify(unreachable)}`));
      }
    }
  }

  return { handle };
}
