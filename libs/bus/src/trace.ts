// W3C trace context (traceparent) for the envelope's `trace` field, on both transports.
import { randomFillSync } from "node:crypto";

/** A W3C `traceparent` (version 00): `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`. */
export const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

// Ids come from one pooled buffer refilled 4 KiB at a time: a `randomBytes` call per id was a
// getrandom system call per bus call, a measurable share of the gateway's CPU per transition.
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** `bytes` random bytes as lowercase hex, from the pool. */
function randomHex(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const hex = pool.toString("hex", poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}

/** A new span id that is not all zeros (W3C: an all-zero id is invalid). */
function spanId(): string {
  for (;;) {
    const id = randomHex(8);
    if (id !== ZERO_SPAN) return id;
  }
}

/** The `traceparent` of a call that starts a trace: a new trace id and span id, sampled. */
export function newTraceparent(): string {
  let trace = randomHex(16);
  while (trace === ZERO_TRACE) trace = randomHex(16);
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
