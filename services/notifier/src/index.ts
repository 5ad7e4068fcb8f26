export { nextAttemptAt, type RetryPolicy } from "./backoff.ts";
export {
  devNotifierSettings,
  type NotifierConfig,
  NotifierConfigSchema,
  type NotifierSettings,
  NotifierSettingsSchema,
} from "./config.ts";
export { webhookIdOf } from "./deliveries.ts";
export { DomainEventMessage, runLink } from "./payload.ts";
export { NOTIFIER_CONSUMER, OUTBOX_CURSOR_KEY } from "./sources.ts";
export { devMailDir, type NotifierInfra, type NotifierService, startNotifier } from "./start.ts";
export { addressProblem, checkUrl, type Resolver, systemResolver, type TargetPolicy } from "./targets.ts";
