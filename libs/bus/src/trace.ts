// W3C trace context (traceparent) for the envelope's `trace` field, on both transports.
import { randomBytes } from "node:crypto";

/** A W3C `traceparent` (version 00): `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`. */
export const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/** A new span id that is not all zeros (W3C: an all-zero id is invalid). */
function spanId(): string {
  for (;;) {
    const id = randomBytes(8).toString("hex");
    if (id !== ZERO_SPAN) return id;
  }
}

/** The `traceparent` of a call that starts a trace: a new trace id and span id, sampled. */
export function newTraceparent(): string {
  let trace = randomBytes(16).toString("hex");
  while (trace === ZERO_TRACE) trace = randomBytes(16).toString("hex");
  return `00-${trace}-${spanId()}-01`;
}

/**
 * The `traceparent` of a call made while handling `parent`: the same trace id and flags, a new
 * span id. A parent that is not a valid version-00 `traceparent` starts a new trace, as W3C Trace
 * Context tells a receiver to do with one it cannot read.
 */
export function childTraceparent(parent: string | undefined): string {
  const m = parent === undefined ? null : TRACEPARENT.exec(parent);
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return newTraceparent();
  return `00-${m[1]}-${spanId()}-${m[3]}`;
}
