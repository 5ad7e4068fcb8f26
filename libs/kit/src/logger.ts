// The logger every service and library takes (pino's shape), and the one way a service makes one.
import pino from "pino";

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

/** A service's logger: JSON lines on stdout, each with `name` (e.g. `engine`), from `level` up. */
export function createLogger(name: string, level: LogLevel | string): Logger {
  return pino({ name, level });
}
