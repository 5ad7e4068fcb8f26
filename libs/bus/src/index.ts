export {
  type Bus,
  BusRemoteError,
  BusUnavailable,
  type Envelope,
  EnvelopeSchema,
  type Handler,
  type Reply,
  RetryableError,
  type Subscription,
} from "./bus.ts";
export {
  type EngineRead,
  type EngineWrite,
  type EngineWriteTool,
  type EvidenceCall,
  envelope,
  type JournalRead,
  QUEUES,
  type RegistryCall,
  type RegistryRead,
  type RetryOptions,
  requestWithRetry,
  type SchedulerCall,
  SUBJECTS,
  type TickResult,
} from "./catalog.ts";
export { InProcessBus, subjectPattern } from "./in-process.ts";
export { eventsStream, isMissingStream, NAMESPACE_PATTERN, NatsBus } from "./nats.ts";
