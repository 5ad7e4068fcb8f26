export {
  createScheduler,
  type SchedulerDeps,
  type SchedulerFaults,
  type SchedulerService,
  type SchedulerSettings,
  type Settled,
} from "./app.ts";
export {
  latestDataTime,
  loadManualState,
  loadManualTime,
  MANUAL_CLOCK_KEY,
  openManualClock,
  saveManualState,
} from "./clock-store.ts";
export { SCHEDULER_DEFAULTS, SchedulerConfigSchema, type SchedulerEnv, schedulerSettings } from "./config.ts";
export { type SchedulerFault, type SchedulerInfra, startScheduler } from "./start.ts";
