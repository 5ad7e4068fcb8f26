// Serving and calling a catalog subject by its contract: requests checked on arrival, calls checked by the compiler.
import {
  activeTraceparent,
  busRequestDuration,
  inSpan,
  type Logger,
  secondsSince,
  tracingEnabled,
} from "@baton/kit";
import type { Identity, ToolResult } from "@baton/protocol";
import { type Bus, type Envelope, issuesOf, MalformedMessage, type Subscription } from "./bus.ts";
import { type AnyContract, type ReplyOf, type RequestOf, replyKey } from "./catalog.ts";
import { envelope, type RetryOptions, requestWithRetry } from "./retry.ts";
import { childTraceparent } from "./trace.ts";

/**
 * Whether a typed {@link call} checks its own payload and the reply against the contract. Off in a
 * service, so the hot path parses each message once (on arrival, in {@link serve}); on in tests
 * (`BATON_BUS_CHECK_CALLS=1`, set by the vitest config and inherited by every service process a
 * test starts), so a reply that drifts from its contract fails the test that provoked it. A test
 * switch like `NODE_ENV`, not a service setting: read once here, never from a service's config.
 */
let checkCalls = process.env.BATON_BUS_CHECK_CALLS === "1";

/** Turns the checks of {@link call} on or off in this process (tests); returns the previous setting. */
export function setCallChecks(on: boolean): boolean {
  const previous = checkCalls;
  checkCalls = on;
  return previous;
}

/** The envelope a handler of contract `C` gets: its payload checked, and its caller when `C` needs one. */
export type Served<C extends AnyContract> = Envelope<RequestOf<C>> &
  (C["caller"] extends "identified" ? { identity: Identity } : unknown);

/**
 * What a handler of contract `C` answers: one of its replies. A tool result's `data` is not narrowed
 * by the tool (a replay answers with what its idempotency record holds): its shape is the tool's,
 * which the tests that read it check against the official schemas (ARCHITECTURE rule 3).
 */
export type HandlerReply<C extends AnyContract> =
  | ReplyOf<C>
  | (Extract<ReplyOf<C>, { ok: boolean }> extends never ? never : ToolResult<unknown>);

/** Where a subject is served or called: a partitioned one needs its partition. */
export type Address<C extends AnyContract> = C["partitioned"] extends true
  ? { partition: number }
  : { partition?: never };

/**
 * Serves contract `C` on `bus` (its queue group, or `partition`'s subject for a partitioned one).
 * Every message is checked before `handler` sees it: an envelope without the caller the contract
 * needs, or a payload that breaks the request schema, is answered with a {@link MalformedMessage}
 * (`{ ok: false, code: "invalid", subject, issues }` on the wire) naming the subject and every issue,
 * logged once as a warning, and never reaches the handler. The handler gets the parsed payload.
 */
export function serve<C extends AnyContract>(
  bus: Bus,
  contract: C,
  handler: (request: RequestOf<C>, envelope: Served<C>) => Promise<HandlerReply<C>>,
  options: { log: Logger } & Address<C>,
): Subscription {
  const subject = contract.subject(options.partition ?? 0);
  const needsCaller = contract.caller === "identified";
  return bus.serve(
    subject,
    async (env) => {
      // The common case parses once without `reportInput` (cheaper); a refusal parses again with it,
      // so its issues can quote what was sent.
      let parsed = contract.request.safeParse(env.payload);
      if (!parsed.success) parsed = contract.request.safeParse(env.payload, { reportInput: true });
      const issues = parsed.success ? [] : issuesOf(parsed.error.issues, "payload");
      if (needsCaller && env.identity === null)
        issues.unshift("identity: required: this subject serves callers");
      if (!parsed.success || issues.length > 0) {
        options.log.warn({ subject, type: env.type, id: env.id, issues }, "malformed message refused");
        throw new MalformedMessage(subject, issues);
      }
      // Checked just above: the payload by the request schema, the caller when the contract needs one.
      const served = { ...env, payload: parsed.data } as Served<C>;
      if (!tracingEnabled()) return handler(parsed.data, served);
      // The handling's span, a child of the caller's (the envelope's `trace`): what the handler
      // does (PostgreSQL statements, calls of its own) nests under it.
      return inSpan(
        `serve ${contract.name}`,
        {
          role: "server",
          parent: env.trace,
          attributes: { "baton.subject": contract.name, "baton.type": env.type },
        },
        async (span) => {
          const reply = await handler(parsed.data, served);
          const code = failureOf(reply);
          if (code) {
            span.set({ "baton.outcome": code });
            span.fail(code);
          }
          return reply;
        },
      );
    },
    contract.queue === undefined ? {} : { queue: contract.queue },
  );
}

/** How a typed {@link call} is sent. */
export type CallOptions<C extends AnyContract> = Address<C> &
  RetryOptions & {
    /** The caller (`null`: the server itself, where the contract allows it). */
    identity: C["caller"] extends "identified" ? Identity : Identity | null;
    /** When the caller stops waiting, epoch ms (wall clock); retries stay within it. */
    deadline: number;
    /** The `traceparent` of the message being handled, when this call is made on its behalf. */
    trace?: string | undefined;
  };

/**
 * Sends `request` on contract `C` with {@link requestWithRetry} and returns its reply, typed by the
 * contract: the compiler checks the request, and the reply's type follows from the request's `tool`
 * or `op`. The envelope carries a W3C `traceparent`: a child of `options.trace`, or a new trace.
 * With checks on ({@link setCallChecks}; tests) the request and the reply are parsed against the
 * contract and a mismatch throws {@link MalformedMessage}; otherwise nothing is parsed here.
 * Throws what {@link requestWithRetry} throws.
 */
export async function call<C extends AnyContract, const R extends RequestOf<C>>(
  bus: Bus,
  contract: C,
  request: R,
  options: CallOptions<C>,
): Promise<ReplyOf<C, R>> {
  const subject = contract.subject(options.partition ?? 0);
  if (checkCalls) {
    const parsed = contract.request.safeParse(request, { reportInput: true });
    if (!parsed.success) throw new MalformedMessage(subject, issuesOf(parsed.error.issues, "payload"));
  }
  const env = envelope(contract.type(request), options.identity, request, options.deadline);
  const retry: RetryOptions = {};
  if (options.attemptMs !== undefined) retry.attemptMs = options.attemptMs;
  if (options.sleep !== undefined) retry.sleep = options.sleep;
  const started = performance.now();
  let reply: unknown;
  try {
    if (!tracingEnabled()) {
      env.trace = childTraceparent(options.trace);
      reply = await requestWithRetry(bus, subject, env, retry);
    } else {
      // The call's span: a child of the span active now (the tool call's, or the handling's this
      // call is made in), else of `options.trace`; the envelope carries it across the hop.
      const parent = activeTraceparent() === undefined ? options.trace : undefined;
      reply = await inSpan(
        `call ${contract.name}`,
        { role: "client", parent, attributes: { "baton.subject": contract.name, "baton.type": env.type } },
        async (span) => {
          env.trace = span.traceparent;
          return requestWithRetry(bus, subject, env, retry);
        },
      );
    }
  } finally {
    busRequestDuration.observe({ subject: contract.name }, secondsSince(started));
  }
  if (checkCalls) {
    const schema = contract.replies[replyKey(request)];
    const parsed = schema?.safeParse(reply, { reportInput: true });
    if (!parsed?.success)
      throw new MalformedMessage(
        subject,
        parsed ? issuesOf(parsed.error.issues, "reply") : ["reply: no schema"],
      );
  }
  // The contract types the reply; in tests it was checked just above.
  return reply as ReplyOf<C, R>;
}

/** The protocol error code of a handler's reply (`{ ok: false, error: { code } }`), for its span; else null. */
function failureOf(reply: unknown): string | null {
  if (reply === null || typeof reply !== "object" || !("ok" in reply) || reply.ok !== false) return null;
  const error = (reply as { error?: { code?: unknown } }).error;
  return typeof error?.code === "string" ? error.code : "failed";
}
