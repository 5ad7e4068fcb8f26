// The service kit: what every service takes without taking the bus (logger, environment, signals).
export { DEFAULT_ATTEMPT_MS, parseEnv, SHARED_ENV } from "./env.ts";
export { createLogger, type Logger, type LogLevel, silentLogger } from "./logger.ts";
export { type Running, ServiceLoop, untilSignal } from "./signals.ts";
