// Sending due deliveries (issue #11): hold, send, record — any number of replicas over one table.
import { randomUUID } from "node:crypto";
import type { Clock } from "@baton/clock";
import { type Db, notificationDeliveries, rowsOf, webhookSubscriptions } from "@baton/db";
import { type Logger, notifications, ServiceLoop } from "@baton/kit";
import { and, eq, sql } from "drizzle-orm";
import { nextAttemptAt, type RetryPolicy } from "./backoff.ts";
import type { Mailer } from "./mailer.ts";
import { type MailMessage, webhookBody } from "./payload.ts";
import type { Resolver, TargetPolicy } from "./targets.ts";
import { type AttemptResult, sendWebhook } from "./webhook-sender.ts";

/** How the delivery loop runs (see `config.ts` for each). */
export interface DelivererSettings {
  replicaId: string;
  retry: RetryPolicy;
  /** One attempt's limit, ms. */
  timeoutMs: number;
  /** A replica's hold on the deliveries it sends, ms of PostgreSQL's clock; longer than `timeoutMs`. */
  holdMs: number;
  /** Longest sleep between looks, ms. */
  pollMs: number;
  /** Attempts in flight in this replica. */
  concurrency: number;
  /** Attempts in flight to one destination (a subscription or an address). */
  perTarget: number;
}

/** What the delivery loop needs. */
export interface DelivererDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  settings: DelivererSettings;
  policy: TargetPolicy;
  resolver: Resolver;
  /** Null when this deployment sends no mail (then no mail delivery is ever created). */
  mailer: Mailer | null;
  /** [0, 1), for the back-off's jitter. */
  random?: () => number;
  /** Test hook (`BATON_NOTIFIER_FAULT=kill-after-send`): called once, after the first webhook got an answer, before it is recorded. */
  afterSend?: () => Promise<void>;
}

/** The running loop. */
export interface Deliverer {
  start(): void;
  /** Asks for a look soon (new deliveries, the clock moved, a redelivery). */
  wake(): void;
  /** Stops taking deliveries and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>;
}

/** The `webhook-id` of every attempt of one (event, subscription): stable, so receivers can de-duplicate. */
export function webhookIdOf(eventId: number, subscriptionId: string): string {
  return `msg_${eventId}_${subscriptionId}`;
}

interface Held {
  id: number;
  event_id: string | number;
  destination: string;
  channel: "webhook" | "mail";
  subscription_id: string | null;
  attempts: number;
  give_up_at: Date | string;
  message: MailMessage | null;
  type: string;
  url: string | null;
  secret: string | null;
  sub_state: string | null;
  event_at: Date | string;
  data: Record<string, unknown>;
}

const time = (v: Date | string) => (v instanceof Date ? v.getTime() : new Date(v).getTime());

/**
 * The delivery loop (issue #11). Each round it takes due `pending` deliveries (`next_attempt_at` at
 * or before the injected clock's now) that no live hold covers, with `FOR UPDATE SKIP LOCKED`, and
 * stamps a hold on PostgreSQL's clock — so replicas never send one delivery at the same time, and a
 * replica that dies mid-delivery leaves it to another once the hold ends. Each attempt runs on its
 * own (at most `concurrency` here, `perTarget` per destination), so a slow or dead receiver never
 * delays the others. An attempt's outcome is recorded only while this replica's hold is still the
 * row's (a fenced update): exactly one success is ever recorded per delivery. A failure is retried
 * after an exponential back-off with jitter on the injected clock until `give_up_at`, then `dead`;
 * 410 Gone disables the subscription; a refused target or a 5xx SMTP reply is dead at once.
 */
export function createDeliverer(deps: DelivererDeps): Deliverer {
  const { db, clock, log, settings, policy, resolver, mailer } = deps;
  const random = deps.random ?? Math.random;
  const inFlight = new Map<number, Promise<void>>();
  const perDestination = new Map<string, number>();
  let sentOnce = false;
  const ms = (n: number) => sql`(${n}::double precision * interval '1 millisecond')`;

  const wake = () => loop.wake();

  const busy = () =>
    [...perDestination].filter(([, n]) => n >= settings.perTarget).map(([destination]) => destination);

  const notBusy = (list: string[]) =>
    list.length === 0
      ? sql`true`
      : sql`destination not in (${sql.join(
          list.map((d) => sql`${d}`),
          sql`, `,
        )})`;

  async function take(limit: number, token: string): Promise<Held[]> {
    const result = await db.execute(sql`
      with due as (
        select id from ${notificationDeliveries}
        where state = 'pending' and next_attempt_at <= ${new Date(clock.now())}
          and (held_until is null or held_until <= clock_timestamp())
          and ${notBusy(busy())}
        order by next_attempt_at, id
        limit ${limit}
        for update skip locked
      ), held as (
        update ${notificationDeliveries} d
        set held_until = clock_timestamp() + ${ms(settings.holdMs)}, hold_token = ${token}
        from due where d.id = due.id
        returning d.id, d.event_id, d.destination, d.channel, d.subscription_id, d.attempts, d.give_up_at,
          d.message, d.type
      )
      select held.*, s.url, s.secret, s.state as sub_state, e.at as event_at, e.data
      from held
      join notification_events e on e.event_id = held.event_id
      left join ${webhookSubscriptions} s on s.id = held.subscription_id`);
    return rowsOf<Held>(result);
  }

  async function release(ids: number[], token: string): Promise<void> {
    if (ids.length === 0) return;
    await db.execute(sql`update ${notificationDeliveries} set held_until = null, hold_token = null
      where hold_token = ${token} and id in (${sql.join(
        ids.map((id) => sql`${id}`),
        sql`, `,
      )})`);
  }

  /** Records an attempt and the delivery's new state, if this replica still holds it; says whether it did. */
  async function record(
    row: Held,
    token: string,
    result: AttemptResult,
    started: number,
    next: { state: string; nextAt: number | null; reason: string | null },
  ): Promise<boolean> {
    const at = new Date(clock.now());
    const nextAt = next.nextAt === null ? null : new Date(next.nextAt);
    const recorded = await db.execute(sql`
      with d as (
        update ${notificationDeliveries}
        set state = ${next.state}, attempts = attempts + 1, next_attempt_at = ${nextAt},
          delivered_at = ${next.state === "delivered" ? at : null}, reason = ${next.reason},
          held_until = null, hold_token = null
        where id = ${row.id} and hold_token = ${token}
        returning id, attempts
      )
      insert into notification_attempts
        (delivery_id, n, at, status, response_code, error, duration_ms, next_retry_at, replica)
      select id, attempts, ${at}, ${result.status}, ${result.responseCode}, ${result.error},
        ${Math.max(0, Date.now() - started)}, ${nextAt}, ${settings.replicaId}
      from d
      returning n`);
    return rowsOf(recorded).length > 0;
  }

  /** 410 Gone (issue #11): the subscription is disabled and its other pending deliveries are dead. */
  async function disable(subscriptionId: string): Promise<void> {
    const now = new Date(clock.now());
    await db.transaction(async (tx) => {
      await tx
        .update(webhookSubscriptions)
        .set({ state: "disabled", endedAt: now })
        .where(and(eq(webhookSubscriptions.id, subscriptionId), eq(webhookSubscriptions.state, "active")));
      await tx
        .update(notificationDeliveries)
        .set({
          state: "dead",
          nextAttemptAt: null,
          reason: "the subscription was disabled: its receiver answered 410 Gone",
        })
        .where(
          and(
            eq(notificationDeliveries.subscriptionId, subscriptionId),
            eq(notificationDeliveries.state, "pending"),
          ),
        );
    });
  }

  async function attempt(row: Held, token: string): Promise<void> {
    const started = Date.now();
    let result: AttemptResult;
    if (row.channel === "webhook") {
      if (row.sub_state !== "active" || !row.url || !row.secret) {
        // Removed or disabled since this delivery was made: nothing to send it to.
        await db
          .update(notificationDeliveries)
          .set({
            state: row.sub_state === "removed" ? "cancelled" : "dead",
            nextAttemptAt: null,
            reason: `the subscription is ${row.sub_state ?? "gone"}`,
            heldUntil: null,
            holdToken: null,
          })
          .where(and(eq(notificationDeliveries.id, row.id), eq(notificationDeliveries.holdToken, token)));
        return;
      }
      result = await sendWebhook(
        {
          url: row.url,
          webhookId: webhookIdOf(Number(row.event_id), row.subscription_id as string),
          body: webhookBody(row.type, time(row.event_at), row.data),
          secret: row.secret,
          sentAt: new Date(),
        },
        policy,
        resolver,
        settings.timeoutMs,
      );
      if (deps.afterSend && !sentOnce && result.responseCode !== null) {
        sentOnce = true;
        await deps.afterSend();
      }
    } else if (mailer && row.message) {
      result = await mailer.send(row.id, row.message);
    } else {
      result = { status: "failed", responseCode: null, error: "mail is not configured on this replica" };
    }
    const n = row.attempts + 1;
    let next: { state: string; nextAt: number | null; reason: string | null };
    switch (result.status) {
      case "ok":
        next = { state: "delivered", nextAt: null, reason: null };
        break;
      case "gone":
        next = {
          state: "dead",
          nextAt: null,
          reason: "the receiver answered 410 Gone; the subscription is disabled",
        };
        break;
      case "refused":
        next = { state: "dead", nextAt: null, reason: result.error };
        break;
      case "failed": {
        const at = nextAttemptAt(settings.retry, n, clock.now(), time(row.give_up_at), random());
        next =
          at === null
            ? { state: "dead", nextAt: null, reason: `gave up after ${n} attempts (last: ${result.error})` }
            : { state: "pending", nextAt: at, reason: null };
        break;
      }
      default: {
        const unreachable: never = result.status;
        throw new Error(`unknown attempt status ${String(unreachable)}`);
      }
    }
    const mine = await record(row, token, result, started, next);
    notifications.inc({ channel: row.channel, result: result.status });
    if (!mine) {
      log.warn(
        { delivery: row.id, status: result.status },
        "a delivery's hold ended before its attempt was recorded; another replica sends it",
      );
      return;
    }
    if (result.status === "gone" && row.subscription_id) await disable(row.subscription_id);
    if (result.status !== "ok")
      log.info(
        { delivery: row.id, channel: row.channel, attempt: n, state: next.state, error: result.error },
        "delivery attempt failed",
      );
  }

  function launch(row: Held, token: string): void {
    perDestination.set(row.destination, (perDestination.get(row.destination) ?? 0) + 1);
    const running = attempt(row, token)
      .catch((error: unknown) =>
        // The hold ends by itself and another round sends it again.
        log.warn({ delivery: row.id, err: String(error) }, "delivery attempt could not be recorded"),
      )
      .finally(() => {
        inFlight.delete(row.id);
        const left = (perDestination.get(row.destination) ?? 1) - 1;
        if (left <= 0) perDestination.delete(row.destination);
        else perDestination.set(row.destination, left);
        wake();
      });
    inFlight.set(row.id, running);
  }

  /** Takes what is due and free, and launches it; returns how many were launched. */
  async function round(): Promise<number> {
    const free = settings.concurrency - inFlight.size;
    if (free <= 0) return 0;
    const token = `${settings.replicaId}/${randomUUID()}`;
    const rows = await take(free, token);
    const extra: number[] = [];
    let launched = 0;
    for (const row of rows) {
      if ((perDestination.get(row.destination) ?? 0) >= settings.perTarget) {
        extra.push(row.id);
        continue;
      }
      launch(row, token);
      launched++;
    }
    // More for one destination than it may have in flight: left for a later round.
    await release(extra, token);
    return launched;
  }

  /** Until the next due delivery that this replica could take, ms, at most `pollMs`. */
  async function nextDelay(): Promise<number> {
    const result = await db.execute(sql`
      select min(next_attempt_at) as next from ${notificationDeliveries}
      where state = 'pending' and (held_until is null or held_until <= clock_timestamp()) and ${notBusy(busy())}`);
    const next = rowsOf<{ next: Date | string | null }>(result)[0]?.next;
    if (next === null || next === undefined) return settings.pollMs;
    return Math.min(Math.max(time(next) - clock.now(), 10), settings.pollMs);
  }

  /** One pass of the loop: launch what is due; returns how long to sleep, ms (0: at once). */
  async function pass(): Promise<number> {
    try {
      const launched = await round();
      // Every slot taken: the next attempt to finish wakes the loop.
      if (inFlight.size >= settings.concurrency) return settings.pollMs;
      return launched > 0 ? 0 : await nextDelay();
    } catch (error) {
      log.warn({ err: String(error) }, "delivery round failed");
      return settings.pollMs;
    }
  }

  // News during a pass (an attempt finished, a new delivery) skips the sleep after it.
  const loop = new ServiceLoop(pass, { wokenSkipsSleep: true });
  return {
    start: () => loop.start(),
    wake,
    async stop() {
      await loop.stop();
      await Promise.all(inFlight.values());
    },
  };
}
