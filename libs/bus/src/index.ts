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
  DEFAULT_ATTEMPT_MS,
  type EngineRead,
  type EngineWrite,
  type EngineWriteTool,
  type EvidenceCall,
  envelope,
  GC_MIN_AGE_MS,
  type GcPage,
  type JournalRead,
  QUEUES,
  type RegistryCall,
  type RegistryRead,
  type RetryOptions,
  requestWithRetry,
  type SchedulerCall,
  SUBJECTS,
  type TickResult,
  type UploadIntent,
} from "./catalog.ts";
export {
  AdvanceConflict,
  type AdvanceRecord,
  type Clock,
  type ClockMode,
  type ClockMove,
  type ClockMover,
  clockFor,
  type Logger,
  ManualClock,
  type ManualClockState,
  NATS_CLOCK_RESYNC_MS,
  NatsClock,
  planAdvance,
  REMEMBERED_ADVANCES,
  silentLogger,
  systemClock,
} from "./clock.ts";
export { SHARED_ENV } from "./env.ts";
export { InProcessBus, subjectPattern } from "./in-process.ts";
export { parseEnv, untilSignal } from "./lifecycle.ts";
export { eventsStream, NAMESPACE_PATTERN, NatsBus } from "./nats.ts";
