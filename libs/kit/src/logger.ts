// The logger every service and library takes (pino's shape), and the one way a service makes one.
import pino from "pino";
import { activeTraceId, tracingEnabled } from "./tracing.ts";

/** A minimal structured logger (pino's shape), so libraries do not pick the logging library. */
export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
}

/** A logger that drops everything (tests that assert on values, not logs). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

/** Log levels a service accepts (`BATON_LOG_LEVEL`). */
export type LogLevel = "debug" | "info" | "warn" | "error";

/**
 * Keys whose values never reach a log line, wherever a caller put them (issue #13: never bearer
 * tokens, claim tokens or file URLs): they are replaced by `[hidden]`.
 */
const HIDDEN = [
  "token",
  "*.token",
  "*.*.token",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "secret",
  "*.secret",
  "fileUrl",
  "*.url",
  "*.*.url",
];

/**
 * A service's logger: JSON lines on stdout from `level` up, each with `name` (e.g. `engine`), the
 * level as its name (`"level":"info"`), the time in ISO 8601 (`"time":"2025-…Z"`), and, when spans
 * are on, the `trace_id` of the span the line was written in. Values under {@link HIDDEN} keys are
 * hidden.
 */
export function createLogger(name: string, level: LogLevel | string): Logger {
  return pino({
    name,
    level,
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: HIDDEN, censor: "[hidden]" },
    ...(tracingEnabled()
      ? {
          mixin: () => {
            const traceId = activeTraceId();
            return traceId ? { trace_id: traceId } : {};
          },
        }
      : {}),
  });
}
