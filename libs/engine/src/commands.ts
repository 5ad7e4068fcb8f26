import type {
  CheckAnswers,
  CheckRequest,
  Decision,
  EvidenceItemArg,
  FileCheck,
  Identity,
  ProtocolError,
} from "@baton/protocol";
import type { EngineConfig, PublishedProcess, Run } from "./run.ts";

/** The server acting on its own: timers, waits, failures it detects (§3.1 `by: "server"`). */
export interface ServerActor {
  kind: "server";
}

/** Who applies a command. */
export type Actor = Identity | ServerActor;

/** A command against one existing run. `start_run` is {@link StartCommand}, since no run exists yet. */
export type Command =
  | { type: "claim"; stepId: string }
  | { type: "renew"; claimId: string; progress?: string | undefined }
  | {
      type: "submit";
      claimId: string;
      output: Record<string, unknown>;
      evidence?: EvidenceItemArg[] | undefined;
      summary: string;
      next?: string | undefined;
      reason?: string | undefined;
      /** The evaluator's answers to this submission's {@link Outcome.needsCheck} (check.md §3). */
      check?: CheckAnswers | undefined;
    }
  | { type: "escalate"; claimId: string; note: string }
  | {
      type: "decide";
      workItemId: string;
      snapshot: string;
      decision: Decision;
      output?: Record<string, unknown> | undefined;
      evidence?: EvidenceItemArg[] | undefined;
      summary?: string | undefined;
      next?: string | undefined;
      reason?: string | undefined;
      note?: string | undefined;
      /** The evaluator's answers for a `completed` task submission (check.md §3). */
      check?: CheckAnswers | undefined;
    }
  | { type: "cancel"; reason: string }
  | { type: "send_event"; name: string; data?: Record<string, unknown> | undefined }
  /** Apply every timer due at `now` (lease expiry, waits, time-outs, `due`), and nothing else. */
  | { type: "tick" };

/** `start_run` (tools.md start_run). */
export interface StartCommand {
  runId: string;
  inputs: Record<string, unknown>;
  mode: "live" | "test";
}

/** Everything a command needs besides the run: no I/O, no clock, no randomness (ARCHITECTURE rule 1). */
export interface CommandContext {
  actor: Actor;
  /** The command's time, epoch ms. */
  now: number;
  def: PublishedProcess;
  config: EngineConfig;
  /** Resolved `file` evidence refs of this command (see {@link fileRefsOf}). */
  files?: ReadonlyMap<string, FileCheck>;
}

/** A domain event for the outbox (ARCHITECTURE: outbox → JetStream `events.>`). */
export interface DomainEvent {
  type:
    | "run.started"
    | "run.ended"
    | "step.ready"
    | "step.completed"
    | "step.overdue"
    | "work_item.opened"
    | "event.held"
    | "event.consumed"
    | "step.checked";
  runId: string;
  org: string;
  mode: "live" | "test";
  /** Epoch ms. */
  at: number;
  stepId?: string;
  detail?: Record<string, unknown>;
}

/** What a successful command returns; the shell turns it into the tool's result shape. */
export type CommandValue =
  | { kind: "view" }
  | { kind: "claim"; claimId: string; expiresAt: number; stepId: string }
  | { kind: "renew"; claimId: string; expiresAt: number }
  | { kind: "send_event"; consumedBy: string | null }
  | { kind: "none" };

/**
 * The result of applying a command: the new run (a fresh object; the input is never mutated), whether
 * anything changed (and so must be committed), the value or protocol error, and the domain events.
 * A refusal can still change the runtime (a refused submission records `handoff.issues`, §3.3); run
 * data never changes on a refusal.
 */
export interface Outcome {
  run: Run;
  changed: boolean;
  value: CommandValue | null;
  error: ProtocolError | null;
  events: DomainEvent[];
  /**
   * The timers this transition applied (lease expiry, waits, time-outs, `due`), each at its own time,
   * epoch ms. The journal records them, so each fired timer appears in exactly one journal entry.
   */
  fired: { kind: string; stepId: string; at: number }[];
  /**
   * The command cannot be decided without the evaluator (check.md §3: the check runs after the
   * objective rules pass and before the step completes): the submission passed every objective rule
   * and the step has a check, but the command carries no answers for this request's `key`. Nothing
   * was applied (`run` is the input, `changed` false, no value, no error). The shell has the evaluator
   * answer the request and applies the same command again with `check` set to the answers, which the
   * journal then records, so a replay never asks a model again.
   */
  needsCheck?: CheckRequest;
}

/** The `file` evidence refs a command cites, for the shell to resolve into {@link CommandContext.files}. */
export function fileRefsOf(command: Command): string[] {
  if (command.type !== "submit" && command.type !== "decide") return [];
  return (command.evidence ?? []).filter((e) => e.kind === "file").map((e) => e.ref);
}
