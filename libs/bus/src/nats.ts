import type { Logger } from "@baton/kit";
import {
  connect,
  ErrorCode,
  type JetStreamClient,
  type NatsConnection,
  NatsError,
  RetentionPolicy,
  StorageType,
} from "nats";
import type { Bus, Envelope, Handler, Reply, Subscription } from "./bus.ts";
import { BusUnavailable, MalformedMessage, runHandler, unwrapReply } from "./bus.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Whether a JetStream API error says the stream (or KV bucket, which is a stream) does not exist
 * (`stream not found`, err_code 10059). A read or write of a missing stream itself does not say so:
 * nobody answers it, and it times out.
 */
export function isMissingStream(error: unknown): boolean {
  if (!(error instanceof NatsError)) return false;
  return error.api_error?.err_code === 10059 || /stream not found/i.test(error.message);
}

/** Logs a connection's drops and recoveries until it closes. */
async function reportStatus(connection: NatsConnection, log: Logger): Promise<void> {
  for await (const status of connection.status()) {
    if (status.type === "disconnect") log.warn({ server: status.data }, "NATS connection lost; reconnecting");
    else if (status.type === "reconnect") log.info({ server: status.data }, "NATS connection back");
  }
}

/** The JetStream stream domain events go to, for a namespace (ARCHITECTURE: outbox → `events.>`). */
export function eventsStream(namespace: string): string {
  return `${namespace.toUpperCase().replace(/[^A-Z0-9_-]/g, "_")}_EVENTS`;
}

/**
 * How much of the domain events the JetStream events stream keeps (issue #13): events older than
 * `maxAgeMs` or past `maxBytes` (the oldest first) are dropped. PostgreSQL keeps the record (the
 * run journal); the stream only feeds the notifier.
 */
export interface EventsLimits {
  maxAgeMs: number;
  maxBytes: number;
}

/** The events stream's limits when none are given: 7 days, 1 GiB (`BATON_EVENTS_MAX_AGE_HOURS`, `BATON_EVENTS_MAX_BYTES`). */
export const DEFAULT_EVENTS_LIMITS: EventsLimits = { maxAgeMs: 7 * 24 * 3_600_000, maxBytes: 1_073_741_824 };

/** `BATON_NAMESPACE`'s pattern: a NATS subject token. */
export const NAMESPACE_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * The NATS transport (`baton serve`): request/reply with queue groups for services, JetStream for
 * domain events. Every subject is prefixed with the namespace (`baton` by default), so deployments
 * sharing a NATS cluster never hear each other. `name` identifies the connection in NATS monitoring.
 */
export class NatsBus implements Bus {
  private constructor(
    readonly connection: NatsConnection,
    private readonly js: JetStreamClient,
    readonly namespace: string,
    private readonly log: Logger | undefined,
    private readonly events: EventsLimits | undefined,
  ) {}

  /**
   * Connects to `url` (e.g. `nats://127.0.0.1:4222`) and makes sure the events stream exists. The
   * connection reconnects for ever (a NATS restart or a network cut is a blip, never the end of the
   * service); `log`, when given, is told when it drops and when it is back, and of every message
   * refused because it was not a well-formed envelope.
   */
  static async connect(
    url: string,
    name: string,
    namespace = "baton",
    log?: Logger,
    events?: EventsLimits,
  ): Promise<NatsBus> {
    if (!NAMESPACE_PATTERN.test(namespace))
      throw new Error(`namespace ${namespace} must match ${NAMESPACE_PATTERN}`);
    const connection = await connect({
      servers: url,
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // Without it the client builds two Error objects (their stack traces) for every request, a
      // tenth of the gateway's CPU per call (issue #15 profile); a bus failure is named by its
      // subject and kind (`BusUnavailable`), never by the client's stack.
      noAsyncTraces: true,
    });
    if (log) void reportStatus(connection, log).catch(() => undefined);
    const bus = new NatsBus(connection, connection.jetstream(), namespace, log, events);
    await bus.ensureEventsStream();
    return bus;
  }

  /**
   * Creates the events stream unless it exists: at start, and again whenever a publish finds it
   * gone (deleted, or lost with the JetStream store), so the outbox relay carries on (issue #8). The
   * notifier calls it too before it makes its durable consumer again.
   */
  async ensureEventsStream(): Promise<void> {
    const jsm = await this.connection.jetstreamManager();
    const stream = eventsStream(this.namespace);
    const limits = this.events ?? DEFAULT_EVENTS_LIMITS;
    const max_age = limits.maxAgeMs * 1_000_000;
    // Only a service given limits (the engine and the notifier, which publish and read events)
    // sets a size cap; another that makes the stream first makes it as before (age only), and the
    // engine brings it to its limits when it connects or makes the stream again.
    const max_bytes = this.events ? limits.maxBytes : -1;
    try {
      const info = await jsm.streams.info(stream);
      // A service given limits (the engine, the notifier) brings a stream made with others to them.
      if (this.events && (info.config.max_age !== max_age || info.config.max_bytes !== limits.maxBytes)) {
        await jsm.streams.update(stream, { ...info.config, max_age, max_bytes: limits.maxBytes });
        this.log?.info(
          { stream, maxAgeMs: limits.maxAgeMs, maxBytes: limits.maxBytes },
          "events stream limits set",
        );
      }
    } catch (error) {
      if (!isMissingStream(error)) throw error;
      try {
        await jsm.streams.add({
          name: stream,
          subjects: [`${this.namespace}.events.>`],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          max_age,
          max_bytes,
        });
      } catch (error) {
        // Another service created it at the same moment.
        if (!(error instanceof NatsError) || !/already in use/.test(error.message)) throw error;
      }
    }
  }

  private wire(subject: string): string {
    return `${this.namespace}.${subject}`;
  }

  /** The turn requests and replies of this event-loop iteration wait for; null when none waits. */
  private pendingTurn: Promise<void> | null = null;

  /**
   * Resolves in this event-loop iteration's check phase (`setImmediate`), once for every caller of
   * the iteration. nats.js writes what was sent within one microtask run in one socket write; calls
   * and replies made in separate I/O callbacks of one iteration (16 HTTP requests read in one poll, a
   * group commit's replies) would each cost a write, a wake-up of nats-server and a read there.
   * Sending them all from this one turn makes them one write (issue #15 profile: the write per
   * request was the gateway's largest single cost). The delay is the rest of the current iteration,
   * not a timer.
   */
  private turn(): Promise<void> {
    if (this.pendingTurn) return this.pendingTurn;
    const turn = new Promise<void>((resolve) =>
      setImmediate(() => {
        this.pendingTurn = null;
        resolve();
      }),
    );
    this.pendingTurn = turn;
    return turn;
  }

  async request(subject: string, envelope: Envelope, timeoutMs: number): Promise<unknown> {
    try {
      const payload = encoder.encode(JSON.stringify(envelope));
      await this.turn();
      // The trace context rides in the envelope only: mirroring it in a NATS header cost a header
      // encoding and decoding per message on both sides, and nothing reads it there.
      const msg = await this.connection.request(this.wire(subject), payload, {
        timeout: timeoutMs,
      });
      return unwrapReply(subject, JSON.parse(decoder.decode(msg.data)) as Reply);
    } catch (error) {
      if (error instanceof NatsError) {
        if (error.code === ErrorCode.NoResponders) throw new BusUnavailable(subject, "no_responders");
        if (error.code === ErrorCode.Timeout) throw new BusUnavailable(subject, "timeout");
        if (error.code === ErrorCode.ConnectionClosed) throw new BusUnavailable(subject, "closed");
      }
      throw error;
    }
  }

  serve(subject: string, handler: Handler, options: { queue?: string } = {}): Subscription {
    const sub = this.connection.subscribe(this.wire(subject), {
      ...(options.queue ? { queue: options.queue } : {}),
      callback: (err, msg) => {
        if (err) return;
        let raw: unknown;
        try {
          raw = JSON.parse(decoder.decode(msg.data));
        } catch {
          const refused = new MalformedMessage(subject, ["message: not JSON"]);
          this.log?.warn({ subject, issues: refused.issues }, "malformed message refused");
          msg.respond(encoder.encode(JSON.stringify(refused.reply())));
          return;
        }
        void runHandler(subject, handler, raw, this.log).then(async (reply) => {
          let bytes: Uint8Array;
          try {
            bytes = encoder.encode(JSON.stringify(reply));
          } catch (error) {
            // A value JSON cannot carry (a BigInt, a cycle): a defect of the handler, answered as an
            // error the caller can read rather than left to its deadline.
            this.log?.error({ subject, err: String(error) }, "a reply could not be encoded as JSON");
            const refused: Reply = {
              ok: false,
              message: `the reply to ${subject} could not be encoded as JSON (${String(error)})`,
              retryable: false,
            };
            bytes = encoder.encode(JSON.stringify(refused));
          }
          await this.turn();
          try {
            msg.respond(bytes);
          } catch {
            // The connection is closing (a stop): the caller's deadline answers it. A throw here
            // would be an unhandled rejection, which ends the process.
          }
        });
      },
    });
    return { stop: () => sub.drain() };
  }

  async publish(subject: string, data: unknown): Promise<void> {
    const bytes = encoder.encode(JSON.stringify(data));
    try {
      await this.js.publish(this.wire(subject), bytes);
    } catch (error) {
      // No stream took it: the events stream is gone. Make it again and publish once more; any
      // other failure (NATS unreachable) is the caller's to retry (the outbox keeps the row).
      if (!(error instanceof NatsError && error.code === ErrorCode.NoResponders)) throw error;
      await this.ensureEventsStream();
      await this.js.publish(this.wire(subject), bytes);
    }
  }

  listen(subject: string, onEvent: (subject: string, data: unknown) => void): Subscription {
    const prefix = `${this.namespace}.`;
    const sub = this.connection.subscribe(this.wire(subject), {
      callback: (err, msg) => {
        if (err) return;
        try {
          onEvent(msg.subject.slice(prefix.length), JSON.parse(decoder.decode(msg.data)));
        } catch {
          // A malformed event is not ours to fix; listeners read well-formed ones only.
        }
      },
    });
    return { stop: () => sub.drain() };
  }

  /**
   * Resolves once nats-server has processed everything this connection sent so far, the requests and
   * replies still waiting for this iteration's turn included (they are written before the flush's
   * PING). A test fault that kills the process "after NATS has everything" awaits it.
   */
  async flush(): Promise<void> {
    if (this.pendingTurn) await this.pendingTurn;
    await this.connection.flush();
  }

  async close(): Promise<void> {
    if (!this.connection.isClosed()) await this.connection.drain();
  }
}
