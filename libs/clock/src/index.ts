// The pure clock: what every service reads time through. The NATS KV clock is `@baton/clock/nats`.
export {
  AdvanceConflict,
  type AdvanceRecord,
  type Clock,
  type ClockMode,
  type ClockMove,
  type ClockMover,
  checkStep,
  ManualClock,
  type ManualClockState,
  planAdvance,
  REMEMBERED_ADVANCES,
  systemClock,
} from "./clock.ts";
