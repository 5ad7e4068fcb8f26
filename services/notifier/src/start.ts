// The notifier's one wiring (issue #11; issue #9's shape): `startNotifier(config, infra)` → `{ stop() }`.
import { hostname } from "node:os";
import { join } from "node:path";
import { type Bus, CONTRACTS, type Envelope, NatsBus, serve } from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Db } from "@baton/db";
import { inSpan, type Logger, tracingEnabled } from "@baton/kit";
import { DEFAULTS, type ToolResult } from "@baton/protocol";
import { createAdmin } from "./admin.ts";
import type { NotifierSettings } from "./config.ts";
import { createDeliverer } from "./deliveries.ts";
import { createIngest, type Ingested } from "./ingest.ts";
import { fileMailer, type Mailer, smtpMailer } from "./mailer.ts";
import type { DomainEventMessage } from "./payload.ts";
import { type EventSource, jetStreamSource, outboxSource } from "./sources.ts";
import { type Resolver, systemResolver } from "./targets.ts";

/** What the notifier runs over. */
export interface NotifierInfra {
  db: Db;
  /** A {@link NatsBus}: events come from JetStream. Another bus (`baton dev`): from the outbox table. */
  bus: Bus;
  clock: Clock;
  /** Tells the notifier when a manual clock moves (retries fall due); absent for real time. */
  watchClock?: (listener: (now: number) => void) => () => void;
  log: Logger;
  /** `baton dev`: without SMTP, each mail becomes an `.eml` file here (`<data-dir>/mail`). */
  mailDir?: string;
  /** DNS (tests stand in for it to show a rebinding is refused); default the system's. */
  resolver?: Resolver;
  /** [0, 1) for the back-off's jitter (tests make it fixed); default `Math.random`. */
  random?: () => number;
}

/** A running notifier. */
export interface NotifierService {
  /** Serves one `notifier` call (the admin API's), as the bus would. */
  handle(env: Envelope): Promise<ToolResult<unknown>>;
  stop(): Promise<void>;
}

/**
 * Starts the notification service (issue #11): reads every domain event once (JetStream's durable
 * consumer `notifier` over NATS; the outbox table in `baton dev`), records one delivery per (event,
 * destination) in PostgreSQL, sends them — signed webhooks and mail — with retries on the injected
 * clock, and serves the admin calls on `notifier`. Any number of replicas may run over one database.
 */
export async function startNotifier(
  config: NotifierSettings,
  infra: NotifierInfra,
): Promise<NotifierService> {
  const { db, bus, clock, log } = infra;
  const replicaId = config.BATON_REPLICA_ID ?? `${hostname()}-${process.pid}`;
  const policy = {
    allowHttp: config.BATON_WEBHOOK_ALLOW_HTTP,
    allowPrivate: config.BATON_WEBHOOK_ALLOW_PRIVATE,
  };
  const resolver = infra.resolver ?? systemResolver;
  const retry = {
    baseMs: config.BATON_NOTIFIER_RETRY_BASE_MS,
    maxMs: config.BATON_NOTIFIER_RETRY_MAX_MS,
    giveUpMs: config.BATON_NOTIFIER_GIVE_UP_MS,
  };
  let mailer: Mailer | null = null;
  if (config.BATON_SMTP_URL)
    mailer = smtpMailer(config.BATON_SMTP_URL, config.BATON_MAIL_FROM, config.BATON_NOTIFIER_TIMEOUT_MS);
  else if (infra.mailDir) mailer = fileMailer(infra.mailDir, config.BATON_MAIL_FROM);

  const afterSend =
    config.BATON_NOTIFIER_FAULT === "kill-after-send"
      ? async () => {
          log.warn({ fault: config.BATON_NOTIFIER_FAULT }, "test fault: SIGKILL");
          process.kill(process.pid, "SIGKILL");
        }
      : undefined;
  const deliverer = createDeliverer({
    db,
    clock,
    log,
    policy,
    resolver,
    mailer,
    ...(infra.random ? { random: infra.random } : {}),
    ...(afterSend ? { afterSend } : {}),
    settings: {
      replicaId,
      retry,
      timeoutMs: config.BATON_NOTIFIER_TIMEOUT_MS,
      holdMs: config.BATON_NOTIFIER_HOLD_MS,
      pollMs: config.BATON_NOTIFIER_POLL_MS,
      concurrency: config.BATON_NOTIFIER_CONCURRENCY,
      perTarget: config.BATON_NOTIFIER_PER_TARGET,
    },
  });
  const ingest = createIngest({
    db,
    clock,
    log,
    publicUrl: config.BATON_PUBLIC_URL,
    giveUpMs: retry.giveUpMs,
    mail: {
      enabled: mailer !== null,
      operatorsEmail: config.BATON_OPERATORS_EMAIL ?? null,
      operatorGroup: DEFAULTS.operatorGroup,
    },
  });
  const onEvents = async (events: DomainEventMessage[]) => {
    // With spans on, recording an event's deliveries is a span of its transition's trace: one span
    // per event, each lasting its batch's recording.
    const results = tracingEnabled()
      ? await events.reduceRight<() => Promise<Ingested[]>>(
          (inner, event) => () =>
            inSpan(
              `notify ${event.type}`,
              { role: "consumer", parent: event.trace, attributes: { "baton.event": event.type } },
              inner,
            ),
          () => ingest(events),
        )()
      : await ingest(events);
    if (results.some((r) => r.outcome === "new" && r.pending > 0)) deliverer.wake();
  };
  const handle = createAdmin({
    db,
    clock,
    policy,
    resolver,
    giveUpMs: retry.giveUpMs,
    wake: () => deliverer.wake(),
  });

  deliverer.start();
  const unwatch = infra.watchClock?.(() => deliverer.wake()) ?? null;
  const source: EventSource =
    bus instanceof NatsBus
      ? jetStreamSource(bus, onEvents, {
          ackWaitMs: config.BATON_NOTIFIER_ACK_WAIT_MS,
          log,
          noAck: config.BATON_NOTIFIER_FAULT === "no-ack",
        })
      : outboxSource(db, bus, onEvents, { pollMs: config.BATON_NOTIFIER_POLL_MS, log });
  const sub = serve(bus, CONTRACTS.notifier, (_call, env) => handle(env), { log });
  log.info(
    {
      replica: replicaId,
      mail: config.BATON_SMTP_URL ? "smtp" : infra.mailDir ? "files" : "off",
      events: bus instanceof NatsBus ? "jetstream" : "outbox",
    },
    "notifier started",
  );
  return {
    handle,
    async stop() {
      await sub.stop();
      unwatch?.();
      await source.stop();
      await deliverer.stop();
      mailer?.close();
    },
  };
}

/** Where `baton dev` keeps the `.eml` files of mail it would have sent. */
export const devMailDir = (dataDir: string) => join(dataDir, "mail");
