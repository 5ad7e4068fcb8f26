// Where the notifier reads domain events: JetStream (`baton serve`) or the outbox table (`baton dev`).
import type { Bus } from "@baton/bus";
import { eventsStream, type NatsBus } from "@baton/bus";
import { type Db, outbox, rowsOf, settings as settingsTable } from "@baton/db";
import type { Logger } from "@baton/kit";
import { eq, sql } from "drizzle-orm";
import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg, nanos } from "nats";
import { DomainEventMessage } from "./payload.ts";

/**
 * Reads a batch of events (in the order read); resolves once all their deliveries are recorded (then
 * each is acknowledged), rejects to have every event of the batch read again.
 */
export type OnEvents = (events: DomainEventMessage[]) => Promise<void>;

/** A running source of events. */
export interface EventSource {
  stop(): Promise<void>;
}

/** The durable consumer every notifier replica shares, in the namespace's events stream. */
export const NOTIFIER_CONSUMER = "notifier";

/**
 * The most events read as one batch (issue #15): JetStream messages that arrived while the previous
 * batch was being recorded, or outbox rows read at once.
 */
export const BATCH_MAX = 200;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Reads `events.>` through the durable JetStream pull consumer `notifier` (issue #11), shared by any
 * number of replicas: each event goes to one of them, and comes again (to any) when it is not
 * acknowledged within `ackWaitMs` — a replica that died, or one that never acknowledges (the
 * `no-ack` test hook). Events are recorded in batches (issue #15): whatever has arrived — the
 * consumer's buffered messages, and those that came while the previous batch was being recorded —
 * up to {@link BATCH_MAX}, never waiting for more (a lone event is recorded as soon as it comes).
 * An event is acknowledged only after {@link OnEvents} recorded its batch; a failed batch is offered
 * again, every event of it, a second later. The consumer starts from the stream's first event the
 * first time it is made (what is already recorded is never sent twice). If the stream or the
 * consumer is lost (issue #8), both are made again and reading carries on.
 */
export function jetStreamSource(
  bus: NatsBus,
  onEvents: OnEvents,
  options: { ackWaitMs: number; log: Logger; noAck?: boolean },
): EventSource {
  const { log } = options;
  const stream = eventsStream(bus.namespace);
  let stopped = false;
  let messages: ConsumerMessages | null = null;
  // Messages received and not yet recorded, and the loop recording them (null when idle).
  const queue: JsMsg[] = [];
  let recording: Promise<void> | null = null;
  let roomFor: (() => void) | null = null;

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

  /** Records one batch of messages, then acknowledges them all, or offers them all again. */
  async function record(batch: JsMsg[]): Promise<void> {
    const events: DomainEventMessage[] = [];
    const read: JsMsg[] = [];
    for (const m of batch) {
      try {
        events.push(DomainEventMessage.parse(m.json()));
        read.push(m);
      } catch (error) {
        // Not an event this notifier can read: taking it again would never help.
        log.warn({ subject: m.subject, err: String(error) }, "a malformed domain event was skipped");
        m.term();
      }
    }
    if (events.length === 0) return;
    try {
      await onEvents(events);
      if (!options.noAck) for (const m of read) m.ack();
    } catch (error) {
      log.warn(
        { events: events.length, first: events[0]?.id, err: String(error) },
        "domain events could not be recorded; read again soon",
      );
      for (const m of read) m.nak(1_000);
    }
  }

  /** Records what is queued, batch after batch, until the queue is empty. */
  async function drain(): Promise<void> {
    // One turn of the event loop: the messages the consumer already holds join this batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (queue.length > 0 && !stopped) {
      const batch = queue.splice(0, BATCH_MAX);
      roomFor?.();
      await record(batch);
    }
  }

  /** Starts recording what is queued, unless a recording loop runs (it takes what is queued next). */
  function kick(): void {
    if (recording || queue.length === 0 || stopped) return;
    recording = drain().finally(() => {
      recording = null;
      // A message queued between the loop's last look and this moment.
      kick();
    });
  }

  function take(m: JsMsg): void {
    queue.push(m);
    kick();
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
          take(m);
          // A full batch waiting: stop taking (and so pulling) more until it is being recorded, so one
          // replica never holds much more than a batch that others could be reading.
          if (queue.length >= BATCH_MAX)
            await new Promise<void>((resolve) => {
              roomFor = () => {
                roomFor = null;
                resolve();
              };
            });
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
      roomFor?.();
      await done;
      await recording?.catch(() => undefined);
    },
  };
}

/** The `settings` key of the outbox reader's position (the last outbox id it recorded). */
export const OUTBOX_CURSOR_KEY = "notifier.outbox";

/**
 * Reads the outbox table itself (`baton dev`, issue #11: "read what the outbox committed, not a
 * best-effort in-process publish"): rows after the last one recorded, in id order, up to
 * {@link BATCH_MAX} at a time recorded as one batch (issue #15), woken by the
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
  onEvents: OnEvents,
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
          sql`select id, payload from ${outbox} where id > ${position} order by id limit ${BATCH_MAX}`,
        );
        const list = rowsOf<{ id: string | number; payload: object }>(rows);
        if (stopped) return;
        const events: DomainEventMessage[] = [];
        for (const row of list) {
          const id = Number(row.id);
          const parsed = DomainEventMessage.safeParse({ ...row.payload, id });
          if (parsed.success) events.push(parsed.data);
          else options.log.warn({ id }, "a malformed outbox row was skipped");
          position = id;
        }
        // The whole read is one batch (issue #15); a failure reads it all again.
        if (events.length > 0) await onEvents(events);
        after = position;
        // Saved once per batch: reading an event again after a crash records nothing new.
        if (list.length > 0) await save(position);
        if (list.length === BATCH_MAX) continue;
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
