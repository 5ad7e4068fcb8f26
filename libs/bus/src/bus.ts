import type { Identity } from "@baton/protocol";
import { z } from "zod";

/**
 * The message bus between services (ARCHITECTURE: NATS request/reply, or in process for `baton dev`).
 * Both transports move the same JSON envelopes, so a service cannot tell them apart.
 */

/** The envelope every service call travels in (CONVENTIONS "one envelope"). */
export interface Envelope<P = unknown> {
  /** The message type, e.g. `engine.command`. */
  type: string;
  /** A unique message id, for logs and traces. */
  id: string;
  /** W3C `traceparent` of the caller's span, when tracing is on. */
  trace?: string;
  /** The verified caller, or null for server-internal calls (scheduler, admin). */
  identity: Identity | null;
  /** Epoch ms after which the caller no longer waits; handlers may drop work past it. */
  deadline: number;
  payload: P;
}

const IdentitySchema = z.object({
  org: z.string(),
  kind: z.enum(["agent", "person"]),
  id: z.string(),
  groups: z.array(z.string()),
  operator: z.boolean(),
});

/** Validates an incoming envelope's frame (the payload is validated by the handler's own schema). */
export const EnvelopeSchema = z.object({
  type: z.string(),
  id: z.string(),
  trace: z.string().optional(),
  identity: IdentitySchema.nullable(),
  deadline: z.number(),
  payload: z.unknown(),
});

/** What travels back: the handler's value, or why it failed (never a protocol error: those are values). */
export type Reply = { ok: true; value: unknown } | { ok: false; message: string; retryable: boolean };

/** A handler: returns the reply value, or throws (unexpected failure). */
export type Handler = (envelope: Envelope) => Promise<unknown>;

/** Thrown by {@link Bus.request} when nobody answered in time or nobody serves the subject. */
export class BusUnavailable extends Error {
  constructor(
    readonly subject: string,
    readonly reason: "no_responders" | "timeout" | "closed",
  ) {
    super(`${subject}: ${reason === "no_responders" ? "no service is serving this subject" : reason}`);
    this.name = "BusUnavailable";
  }
}

/** Thrown by {@link Bus.request} when the handler failed unexpectedly. */
export class BusRemoteError extends Error {
  constructor(
    readonly subject: string,
    message: string,
    readonly retryable: boolean,
  ) {
    super(`${subject}: ${message}`);
    this.name = "BusRemoteError";
  }
}

/** Throw this from a handler when a retry can succeed (a lost fence, a database hiccup). */
export class RetryableError extends Error {
  override name = "RetryableError";
}

/** A subscription; `stop()` drains it. */
export interface Subscription {
  stop(): Promise<void>;
}

/** A bus transport. */
export interface Bus {
  /** Sends a request and waits up to `timeoutMs` for the reply value. Throws {@link BusUnavailable} or {@link BusRemoteError}. */
  request(subject: string, envelope: Envelope, timeoutMs: number): Promise<unknown>;
  /** Serves `subject`; with `queue`, replicas share the load (one of them answers each request). */
  serve(subject: string, handler: Handler, options?: { queue?: string }): Subscription;
  /** Publishes a domain event (`events.>`): durable on NATS JetStream, best effort in process. */
  publish(subject: string, data: unknown): Promise<void>;
  /** Subscribes to published domain events matching `subject` (NATS wildcards). */
  listen(subject: string, onEvent: (subject: string, data: unknown) => void): Subscription;
  close(): Promise<void>;
}

/** Runs a handler and turns its outcome into a {@link Reply}. */
export async function runHandler(handler: Handler, raw: unknown): Promise<Reply> {
  const parsed = EnvelopeSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, message: "malformed envelope", retryable: false };
  try {
    const value = await handler(parsed.data as Envelope);
    return { ok: true, value };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, message, retryable: error instanceof RetryableError };
  }
}

/** Unwraps a {@link Reply} or throws {@link BusRemoteError}. */
export function unwrapReply(subject: string, reply: Reply): unknown {
  if (reply.ok) return reply.value;
  throw new BusRemoteError(subject, reply.message, reply.retryable);
}
