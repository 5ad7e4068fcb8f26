import type { Logger } from "@baton/kit";
import { formatArgIssues, type Identity } from "@baton/protocol";
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
  /**
   * W3C `traceparent` of the caller's span (`trace.ts`): set by every typed `call`, carried in the envelope on both
   * transports (no NATS header mirrors it: nothing reads one, and it cost CPU per message). Absent from envelopes
   * built by hand; a receiver that cannot read it starts a new trace.
   */
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

/**
 * A message that broke its subject's schema, as it travels back (issue #9): never handled, never
 * retried. `subject` is the logical subject it was sent on; `issues` say what is wrong, one per
 * problem, as `path: problem` (`payload.args.stepId: required`, `identity: required`).
 */
export interface MalformedReply {
  ok: false;
  code: "invalid";
  subject: string;
  message: string;
  issues: string[];
  retryable: false;
}

/**
 * What travels back: the handler's value, or why it failed (never a protocol error: those are
 * values), or why the message was not handled at all ({@link MalformedReply}).
 */
export type Reply =
  | { ok: true; value: unknown }
  | { ok: false; message: string; retryable: boolean }
  | MalformedReply;

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

/**
 * A message broke its subject's schema (issue #9): thrown by the typed `serve` before the handler
 * would see it (and answered as a {@link MalformedReply}), by {@link Bus.request} when the answer
 * is one, and by a typed `call` whose checks are on when its payload or reply breaks the schema.
 */
export class MalformedMessage extends BusRemoteError {
  override name = "MalformedMessage";
  readonly code = "invalid";

  constructor(
    subject: string,
    readonly issues: string[],
  ) {
    super(
      subject,
      `the message does not match the schema of ${subject}: ${issues.slice(0, 5).join("; ")}`,
      false,
    );
  }

  /** The wire form of this refusal. */
  reply(): MalformedReply {
    return {
      ok: false,
      code: "invalid",
      subject: this.subject,
      message: this.message,
      issues: this.issues,
      retryable: false,
    };
  }
}

/** zod issues as `path: problem` lines, every one, under `prefix` (e.g. `payload`). */
export function issuesOf(issues: readonly z.core.$ZodIssue[], prefix?: string): string[] {
  return formatArgIssues(
    prefix === undefined ? issues : issues.map((i) => ({ ...i, path: [prefix, ...i.path] })),
  );
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

/**
 * Runs a handler on a message that arrived on `subject` and turns its outcome into a {@link Reply}.
 * An envelope whose frame is malformed is answered {@link MalformedReply} without running the
 * handler, and told to `log` once (the payload is the typed `serve`'s to check, and to log).
 */
export async function runHandler(
  subject: string,
  handler: Handler,
  raw: unknown,
  log?: Logger,
): Promise<Reply> {
  const parsed = EnvelopeSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    const refused = new MalformedMessage(subject, issuesOf(parsed.error.issues));
    log?.warn({ subject, issues: refused.issues }, "malformed envelope refused");
    return refused.reply();
  }
  try {
    // The frame was checked just above; the payload is the handler's (typed `serve`) to check.
    const value = await handler(parsed.data as Envelope);
    return { ok: true, value };
  } catch (error) {
    if (error instanceof MalformedMessage) return error.reply();
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, message, retryable: error instanceof RetryableError };
  }
}

/** Unwraps a {@link Reply} or throws {@link BusRemoteError} ({@link MalformedMessage} for a malformed message). */
export function unwrapReply(subject: string, reply: Reply): unknown {
  if (reply.ok) return reply.value;
  if ("code" in reply && reply.code === "invalid") throw new MalformedMessage(reply.subject, reply.issues);
  throw new BusRemoteError(subject, reply.message, reply.retryable);
}
