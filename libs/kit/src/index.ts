// The service kit: what every service takes without taking the bus (logger, environment, signals, operations).
export {
  always,
  DEFAULT_ATTEMPT_MS,
  DEFAULT_OPS_PORT,
  OPS_ENV,
  parseEnv,
  SHARED_ENV,
  settingsForLog,
} from "./env.ts";
export { createLogger, type Logger, type LogLevel, silentLogger } from "./logger.ts";
export {
  busRequestDuration,
  claimLeasesExpired,
  collectProcessMetrics,
  commitStatements,
  METRICS_CONTENT_TYPE,
  metricsText,
  notifications,
  onScrape,
  outboxRounds,
  partitionsOwned,
  registry as metricsRegistry,
  secondsSince,
  stepsOverdue,
  timerLag,
  timersDue,
  toolCalls,
  toolDuration,
  transitions,
} from "./metrics.ts";
export {
  Health,
  type OpsServer,
  type Probe,
  type Readiness,
  registerOpsRoutes,
  startOpsServer,
} from "./ops.ts";
export { type Running, ServiceLoop, untilSignal } from "./signals.ts";
export { addressesOf, Unreachable, untilReachable } from "./startup.ts";
export {
  type ActiveSpan,
  activeTraceId,
  activeTraceparent,
  enableTracing,
  flushTracing,
  inSpan,
  type SpanRole,
  setTracingShutdown,
  tracingEnabled,
} from "./tracing.ts";
