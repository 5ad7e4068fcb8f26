// Spans (issue #13): OpenTelemetry when the SDK was registered at start, nothing at all otherwise.
import type * as OtelApi from "@opentelemetry/api";

/**
 * The OpenTelemetry API, once `services/cli/src/otel.ts` started the SDK (an `OTEL_*` endpoint is
 * set) and handed it here; null otherwise, and then every function below costs one comparison: no
 * SDK, no API module, no span object is ever loaded or made (the zero-cost default).
 */
let otel: typeof OtelApi | null = null;
let tracer: OtelApi.Tracer | null = null;

/** Turns spans on in this process: called once by the SDK's register module, before any service starts. */
export function enableTracing(api: typeof OtelApi): void {
  otel = api;
  tracer = api.trace.getTracer("baton");
}

let shutdown: (() => Promise<void>) | null = null;

/** Tells the kit how to flush and stop the SDK (the register module). */
export function setTracingShutdown(stop: () => Promise<void>): void {
  shutdown = stop;
}

/**
 * Exports the spans not yet sent and stops the SDK, within `timeoutMs` (a service's last step when it
 * stops); does nothing when tracing is off.
 */
export async function flushTracing(timeoutMs = 5_000): Promise<void> {
  if (!shutdown) return;
  const stop = shutdown;
  shutdown = null;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    stop().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    }),
  ]);
  clearTimeout(timer);
}

/** Whether spans are made in this process (an OTLP endpoint was configured at start). */
export function tracingEnabled(): boolean {
  return tracer !== null;
}

/** A span's W3C `traceparent` (version 00). */
function traceparentOf(context: OtelApi.SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.traceFlags & 1 ? "01" : "00"}`;
}

/** The trace id of the span active now (for log lines), or undefined. */
export function activeTraceId(): string | undefined {
  if (!otel) return undefined;
  const span = otel.trace.getActiveSpan();
  return span?.spanContext().traceId;
}

/** The `traceparent` of the span active now, or undefined (no tracing, no span). */
export function activeTraceparent(): string | undefined {
  if (!otel) return undefined;
  const span = otel.trace.getActiveSpan();
  return span ? traceparentOf(span.spanContext()) : undefined;
}

/** How a span relates to its peers (OpenTelemetry's span kinds). */
export type SpanRole = "internal" | "server" | "client" | "consumer";

const W3C = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span that is being timed: its `traceparent`, attributes to add, and whether it failed. */
export interface ActiveSpan {
  /** The W3C `traceparent` a call made on behalf of this span carries (the envelope's `trace`). */
  readonly traceparent: string;
  /** Adds attributes (strings, numbers, booleans; never tokens or people). */
  set(attributes: Record<string, string | number | boolean>): void;
  /** Marks the span failed with `message` (a protocol error code, an exception). */
  fail(message: string): void;
}

/**
 * Runs `work` in a new span `name`: a child of `parent` (a W3C `traceparent` that came in a bus
 * envelope or an outbox event) when given and valid, else of the span active now. Inside `work`
 * the span is active, so the `pg` and `http` instrumentations nest their spans under it. The span
 * ends when `work` settles; a throw marks it failed. Only call it when {@link tracingEnabled}.
 */
export async function inSpan<T>(
  name: string,
  options: { role?: SpanRole; parent?: string | undefined; attributes?: Record<string, string | number> },
  work: (span: ActiveSpan) => Promise<T>,
): Promise<T> {
  const api = otel as typeof OtelApi;
  const t = tracer as OtelApi.Tracer;
  let context = api.context.active();
  const m = options.parent ? W3C.exec(options.parent) : null;
  if (m)
    context = api.trace.setSpanContext(context, {
      traceId: m[1] as string,
      spanId: m[2] as string,
      traceFlags: Number.parseInt(m[3] as string, 16),
      isRemote: true,
    });
  const kind =
    options.role === "server"
      ? api.SpanKind.SERVER
      : options.role === "client"
        ? api.SpanKind.CLIENT
        : options.role === "consumer"
          ? api.SpanKind.CONSUMER
          : api.SpanKind.INTERNAL;
  const span = t.startSpan(
    name,
    { kind, ...(options.attributes ? { attributes: options.attributes } : {}) },
    context,
  );
  const active: ActiveSpan = {
    traceparent: traceparentOf(span.spanContext()),
    set: (attributes) => span.setAttributes(attributes),
    fail: (message) => span.setStatus({ code: api.SpanStatusCode.ERROR, message }),
  };
  try {
    return await api.context.with(api.trace.setSpan(context, span), () => work(active));
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: String(error) });
    throw error;
  } finally {
    span.end();
  }
}
