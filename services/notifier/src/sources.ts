// Where the notifier reads domain events: JetStream (`baton serve`) or the outbox table (`baton dev`).
import type { Bus } from "@baton/bus";
import { eventsStream, type NatsBus } from "@baton/bus";
import { type Db, outbox, rowsOf, settings as settingsTable } from "@baton/db";
import type { Logger } from "@baton/kit";
import { eq, sql } from "drizzle-orm";
import { AckPolicy, type ConsumerMessages, DeliverPolicy, nanos } from "nats";
import { DomainEventMessage } from "./payload.ts";

/** Reads one event; resolves once its deliveries are recorded (then it is acknowledged), rejects to have it read again. */
export type OnEvent = (event: DomainEventMessage) => Promise<void>;

/** A running source of events. */
export interface EventSource {
  stop(): Promise<void>;
}

/** The durable consumer every notifier replica shares, in the namespace's events stream. */
export const NOTIFIER_CONSUMER = "notifier";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Reads `events.>` through the durable JetStream pull consumer `notifier` (issue #11), shared by any
 * number of replicas: each event goes to one of them, and comes again (to any) when it is not
 * acknowledged within `ackWaitMs` — a replica that died, or one that never acknowledges (the
 * `no-ack` test hook). An event is acknowledged only after {@link OnEvent} recorded it; a failure is
 * offered again a second later. The consumer starts from the stream's first event the first time it
 * is made (what is already recorded is never sent twice). If the stream or the consumer is lost
 * (issue #8), both are made again and reading carries on.
 */
export function jetStreamSource(
  bus: NatsBus,
  onEvent: OnEvent,
  options: { ackWaitMs: number; log: Logger; noAck?: boolean },
): EventSource {
  const { log } = options;
  const stream = eventsStream(bus.namespace);
  let stopped = false;
  let messages: ConsumerMessages | null = null;

  async function ensureConsumer(): Promise<void> {
    await bus.ensureEventsStream();
    const jsm = await bus.connection.jetstreamManager();
    const config = {
      durable_name: NOTIFIER_CONSUMER,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(options.ackWaitMs),
      max_deliver: -1,
      max_ack_pending: 1_000,
      filter_subject: `${bus.namespace}.events.>`,
    };
    try {
      const info = await jsm.consumers.info(stream, NOTIFIER_CONSUMER);
      if (info.config.ack_wait !== config.ack_wait)
        await jsm.consumers.update(stream, NOTIFIER_CONSUMER, { ack_wait: config.ack_wait });
    } catch {
      try {
        await jsm.consumers.add(stream, config);
      } catch (error) {
        // Another replica made it at the same moment.
        await jsm.consumers.info(stream, NOTIFIER_CONSUMER).catch(() => {
          throw error;
        });
      }
    }
  }

  async function run(): Promise<void> {
    while (!stopped) {
      try {
        await ensureConsumer();
        const consumer = await bus.connection.jetstream().consumers.get(stream, NOTIFIER_CONSUMER);
        messages = await consumer.consume({ max_messages: 64 });
        void (async () => {
          for await (const status of await messages.status()) {
            if (status.type === "consumer_not_found" || status.type === "consumer_deleted") messages?.stop();
          }
        })().catch(() => undefined);
        for await (const m of messages) {
          let event: DomainEventMessage;
          try {
            event = DomainEventMessage.parse(m.json());
          } catch (error) {
            // Not an event this notifier can read: taking it again would never help.
            log.warn({ subject: m.subject, err: String(error) }, "a malformed domain event was skipped");
            m.term();
            continue;
          }
          try {
            await onEvent(event);
            if (!options.noAck) m.ack();
          } catch (error) {
            log.warn(
              { event: event.id, err: String(error) },
              "a domain event could not be recorded; read again soon",
            );
            m.nak(1_000);
          }
        }
      } catch (error) {
        if (!stopped)
          log.warn({ err: String(error) }, "reading domain events from JetStream failed; retrying");
      }
      if (!stopped) await sleep(1_000);
    }
  }

  const done = run();
  return {
    async stop() {
      stopped = true;
      messages?.stop();
      await done;
    },
  };
}

/** The `settings` key of the outbox reader's position (the last outbox id it recorded). */
export const OUTBOX_CURSOR_KEY = "notifier.outbox";

/**
 * Reads the outbox table itself (`baton dev`, issue #11: "read what the outbox committed, not a
 * best-effort in-process publish"): rows after the last one recorded, in id order, woken by the
 * in-process publish of each event and every `pollMs`. The position is kept in `settings`, so a
 * crash loses nothing: on restart reading resumes after the last event whose deliveries were
 * recorded (reading one again records nothing new). The very first start begins at the newest row,
 * so an old data directory's history does not send old notifications. A position is enough because
 * PGlite runs one transaction at a time: outbox ids become visible in order, never with a gap that
 * fills later (on a shared PostgreSQL that would not hold, which is why `baton serve` reads JetStream).
 */
export function outboxSource(
  db: Db,
  bus: Bus,
  onEvent: OnEvent,
  options: { pollMs: number; log: Logger },
): EventSource {
  let stopped = false;
  let wakeUp: (() => void) | null = null;
  let woken = false;
  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  const listener = bus.listen("events.>", wake);

  async function cursor(): Promise<number> {
    const rows = await db
      .select({ value: settingsTable.value })
      .from(settingsTable)
      .where(eq(settingsTable.key, OUTBOX_CURSOR_KEY));
    const stored = (rows[0]?.value as { after?: number } | undefined)?.after;
    if (typeof stored === "number") return stored;
    const max = await db.execute(sql`select coalesce(max(id), 0) as max from ${outbox}`);
    const after = Number(rowsOf<{ max: string | number }>(max)[0]?.max ?? 0);
    await save(after);
    return after;
  }

  async function save(after: number): Promise<void> {
    await db
      .insert(settingsTable)
      .values({ key: OUTBOX_CURSOR_KEY, value: { after } })
      .onConflictDoUpdate({ target: settingsTable.key, set: { value: { after } } });
  }

  async function run(): Promise<void> {
    let after: number | null = null;
    while (!stopped) {
      woken = false;
      try {
        let position: number = after ?? (await cursor());
        after = position;
        const rows: unknown = await db.execute(
          sql`select id, payload from ${outbox} where id > ${position} order by id limit 200`,
        );
        const list = rowsOf<{ id: string | number; payload: object }>(rows);
        for (const row of list) {
          if (stopped) return;
          const id = Number(row.id);
          const parsed = DomainEventMessage.safeParse({ ...row.payload, id });
          if (parsed.success) await onEvent(parsed.data);
          else options.log.warn({ id }, "a malformed outbox row was skipped");
          position = id;
          after = id;
        }
        // Saved once per batch: reading an event again after a crash records nothing new.
        if (list.length > 0) await save(position);
        if (list.length === 200) continue;
      } catch (error) {
        options.log.warn({ err: String(error) }, "reading the outbox failed; retrying");
      }
      if (stopped || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wakeUp = null;
          resolve();
        }, options.pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          wakeUp = null;
          resolve();
        };
      });
    }
  }

  const done = run();
  return {
    async stop() {
      stopped = true;
      await listener.stop();
      wake();
      await done;
    },
  };
}
