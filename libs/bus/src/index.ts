export {
  type Bus,
  BusRemoteError,
  BusUnavailable,
  type Envelope,
  EnvelopeSchema,
  type Handler,
  issuesOf,
  MalformedMessage,
  type MalformedReply,
  type Reply,
  RetryableError,
  type Subscription,
} from "./bus.ts";
export {
  type AnyContract,
  ClockReply,
  CONTRACTS,
  type Contract,
  EngineRead,
  type EngineReadReplies,
  EngineWrite,
  type EngineWriteReplies,
  type EngineWriteTool,
  EvidenceCall,
  type EvidenceReplies,
  JournalRead,
  QUEUES,
  RegistryCall,
  RegistryRead,
  type RegistryReplies,
  type ReplyKey,
  type ReplyOf,
  type RequestOf,
  replyKey,
  SchedulerCall,
  type SchedulerReplies,
  SUBJECTS,
  TickResult,
} from "./catalog.ts";
export {
  type Address,
  type CallOptions,
  call,
  type HandlerReply,
  type Served,
  serve,
  setCallChecks,
} from "./contract.ts";
export { InProcessBus, subjectPattern } from "./in-process.ts";
export { eventsStream, isMissingStream, NAMESPACE_PATTERN, NatsBus } from "./nats.ts";
export { envelope, type RetryOptions, requestWithRetry } from "./retry.ts";
export { childTraceparent, newTraceparent, TRACEPARENT } from "./trace.ts";
