import {
  connect,
  ErrorCode,
  type JetStreamClient,
  type NatsConnection,
  NatsError,
  RetentionPolicy,
  StorageType,
} from "nats";
import {
  type Bus,
  BusUnavailable,
  type Envelope,
  type Handler,
  type Reply,
  runHandler,
  type Subscription,
  unwrapReply,
} from "./bus.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The JetStream stream domain events go to, for a namespace (ARCHITECTURE: outbox → `events.>`). */
export function eventsStream(namespace: string): string {
  return `${namespace.toUpperCase().replace(/[^A-Z0-9_-]/g, "_")}_EVENTS`;
}

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
  ) {}

  /** Connects to `url` (e.g. `nats://127.0.0.1:4222`) and makes sure the events stream exists. */
  static async connect(url: string, name: string, namespace = "baton"): Promise<NatsBus> {
    if (!NAMESPACE_PATTERN.test(namespace))
      throw new Error(`namespace ${namespace} must match ${NAMESPACE_PATTERN}`);
    const connection = await connect({
      servers: url,
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
    const jsm = await connection.jetstreamManager();
    const stream = eventsStream(namespace);
    try {
      await jsm.streams.info(stream);
    } catch {
      try {
        await jsm.streams.add({
          name: stream,
          subjects: [`${namespace}.events.>`],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          max_age: 7 * 24 * 3600 * 1_000_000_000,
        });
      } catch (error) {
        // Another service created it at the same moment.
        if (!(error instanceof NatsError) || !/already in use/.test(error.message)) throw error;
      }
    }
    return new NatsBus(connection, connection.jetstream(), namespace);
  }

  private wire(subject: string): string {
    return `${this.namespace}.${subject}`;
  }

  async request(subject: string, envelope: Envelope, timeoutMs: number): Promise<unknown> {
    try {
      const msg = await this.connection.request(
        this.wire(subject),
        encoder.encode(JSON.stringify(envelope)),
        {
          timeout: timeoutMs,
        },
      );
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
          msg.respond(
            encoder.encode(JSON.stringify({ ok: false, message: "malformed JSON", retryable: false })),
          );
          return;
        }
        void runHandler(handler, raw).then((reply) => {
          msg.respond(encoder.encode(JSON.stringify(reply)));
        });
      },
    });
    return { stop: () => sub.drain() };
  }

  async publish(subject: string, data: unknown): Promise<void> {
    await this.js.publish(this.wire(subject), encoder.encode(JSON.stringify(data)));
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

  async close(): Promise<void> {
    if (!this.connection.isClosed()) await this.connection.drain();
  }
}
