export { type Accepted, accept, routesOf, type Submission } from "./acceptance.ts";
export { AgreementTally, type ReportedRun } from "./agreement.ts";
export { checkLines, DEFAULT_CHECK_LIMITS, shownRunData, verdictOf } from "./check.ts";
export {
  type Actor,
  type Command,
  type CommandContext,
  type CommandValue,
  type DomainEvent,
  fileRefsOf,
  type Outcome,
  type ServerActor,
  type StartCommand,
} from "./commands.ts";
export { apply, decisionsOf, mayDecide, startRun } from "./machine.ts";
export type {
  CheckLimits,
  ClaimState,
  EngineConfig,
  HeldEvent,
  PublishedProcess,
  Run,
  StepRuntime,
  WorkItemState,
} from "./run.ts";
export { jsonBytes, snapshotOf } from "./snapshot.ts";
export { pendingTimers, type Timer, type TimerKind } from "./timers.ts";
export {
  agentWorkItem,
  claimedStep,
  claimResult,
  handoffOf,
  indexRows,
  type ReadyStepRow,
  runAt,
  runView,
  type WorkItemRow,
  withSnapshot,
  workItemView,
} from "./view.ts";
