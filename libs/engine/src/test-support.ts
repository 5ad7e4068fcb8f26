/**
 * Helpers for this package's unit tests (not exported from the package): processes built from
 * PROCESS.md text, identities, and {@link Sim}, which drives one run through the pure core with an
 * injected clock exactly as the engine shell does (apply → keep the new run when it changed).
 */

import { readFileSync } from "node:fs";
import { parseProcess } from "@baton/process";
import type {
  CheckAnswer,
  CheckAnswers,
  CheckRequest,
  FileCheck,
  Identity,
  ProtocolError,
  RunView,
} from "@baton/protocol";
import type { Actor, Command, CommandValue, DomainEvent, Outcome } from "./commands.ts";
import { apply, startRun } from "./machine.ts";
import type { EngineConfig, PublishedProcess, Run, WorkItemState } from "./run.ts";
import { runAt, runView } from "./view.ts";

/** The settings the tests run with: the defaults of `describe` (10-minute lease, 256 KiB cap). */
export const CONFIG: EngineConfig = { leaseMs: 600_000, runDataBytes: 262_144, operatorGroup: "operators" };

/** 2026-10-06T09:00:00Z, the spec's example morning. */
export const T0 = Date.UTC(2026, 9, 6, 9, 0, 0);

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** A published process from PROCESS.md frontmatter lines (after `name`/`description`). */
export function published(
  name: string,
  lines: readonly string[],
  bindings: Record<string, string> = {},
  version = 1,
): PublishedProcess {
  const source = `${["---", `name: ${name}`, `description: The ${name} test process.`, ...lines, "---"].join("\n")}\n# ${name}\n\nBody of ${name}.\n`;
  const result = parseProcess(source);
  if (!result.ok) {
    throw new Error(
      `test process ${name} does not parse:\n${result.issues.map((i) => `${i.line}:${i.col} ${i.message}`).join("\n")}`,
    );
  }
  const roleBindings = { ...Object.fromEntries(result.process.roles.map((r) => [r, r])), ...bindings };
  return {
    org: "acme",
    name,
    version,
    contentHash: result.process.contentHash,
    process: result.process,
    bindings: roleBindings,
  };
}

/**
 * A conformance fixture (`conformance/fixtures/<name>/PROCESS.md`) published with each role bound to
 * a group of the same name.
 */
export function fixture(name: string): PublishedProcess {
  const source = readFileSync(
    new URL(`../../../conformance/fixtures/${name}/PROCESS.md`, import.meta.url),
    "utf8",
  );
  const result = parseProcess(source, { folderName: name });
  if (!result.ok) throw new Error(`fixture ${name} does not parse: ${JSON.stringify(result.issues)}`);
  return {
    org: "acme",
    name,
    version: 1,
    contentHash: result.process.contentHash,
    process: result.process,
    bindings: Object.fromEntries(result.process.roles.map((r) => [r, r])),
  };
}

/** A scripted evaluator: the answers it gives to a request (check.md §3). */
export type Script = (request: CheckRequest) => CheckAnswers;

/** The model name scripted evaluators answer as. */
export const MODEL = "scripted-evaluator-1";

/** A script answering every request with these answers, in question order. */
export function answering(...answers: CheckAnswer[]): Script {
  return (request) => ({ key: request.key, model: MODEL, answers });
}

/** A script whose evaluator never answers (check.md §3 `error`). */
export const silent: Script = (request) => ({ key: request.key, model: MODEL, error: "no answer" });

/** An agent identity in org `acme`. */
export function agent(id: string): Identity {
  return { org: "acme", kind: "agent", id, groups: [], operator: false };
}

/** A person identity in org `acme`. */
export function person(id: string, groups: string[] = [], operator = false): Identity {
  return { org: "acme", kind: "person", id, groups, operator };
}

/** An operator (a person with the operator role). */
export function operator(id = "olga@example.com"): Identity {
  return person(id, [], true);
}

/** The outcome of a refused command, for assertions. */
export interface Refusal {
  code: ProtocolError["code"];
  issues: string[] | undefined;
  changed: boolean;
}

/**
 * One run driven through the core. `now` moves only when a test moves it; every command is applied
 * at `now`, and the run is replaced only when the outcome says it changed (as the shell commits).
 */
export class Sim {
  run: Run;
  now: number;
  /** Every domain event emitted so far, in order. */
  events: DomainEvent[] = [];
  files = new Map<string, FileCheck>();

  private constructor(
    readonly def: PublishedProcess,
    run: Run,
    now: number,
    readonly config: EngineConfig,
  ) {
    this.run = run;
    this.now = now;
  }

  /** Starts a run, throwing if start is refused. */
  static start(
    def: PublishedProcess,
    actor: Identity,
    inputs: Record<string, unknown> = {},
    options: { mode?: "live" | "test"; now?: number; config?: EngineConfig; runId?: string } = {},
  ): Sim {
    const now = options.now ?? T0;
    const config = options.config ?? CONFIG;
    const outcome = startRun(
      { runId: options.runId ?? "r_test", inputs, mode: options.mode ?? "live" },
      { actor, now, def, config },
    );
    if ("error" in outcome && outcome.error && !("run" in outcome)) {
      throw new Error(`start refused: ${JSON.stringify(outcome.error)}`);
    }
    const o = outcome as Outcome;
    const sim = new Sim(def, o.run, now, config);
    sim.events.push(...o.events);
    return sim;
  }

  /** Moves the clock forward. */
  advance(ms: number): this {
    this.now += ms;
    return this;
  }

  /** Applies the timers due at `now`, as the scheduler's `tick` does. */
  tick(): this {
    this.apply({ kind: "server" }, { type: "tick" });
    return this;
  }

  /** Applies a command; keeps the new run when it changed. */
  apply(actor: Actor, command: Command): Outcome {
    const outcome = apply(this.run, command, {
      actor,
      now: this.now,
      def: this.def,
      config: this.config,
      files: this.files,
    });
    if (outcome.changed) this.run = outcome.run;
    this.events.push(...outcome.events);
    return outcome;
  }

  /**
   * Applies a command as the shell drives a check (check.md §3): when the core asks for the
   * evaluator's answers (`needsCheck`), `script` answers the request and the same command is applied
   * again carrying them. Returns the final outcome and the request, if one was made.
   */
  checked(
    actor: Actor,
    command: Extract<Command, { type: "submit" | "decide" }>,
    script: Script,
  ): { outcome: Outcome; request: CheckRequest | null } {
    const first = this.apply(actor, command);
    if (!first.needsCheck) return { outcome: first, request: null };
    const request = first.needsCheck;
    const outcome = this.apply(actor, { ...command, check: script(request) });
    if (outcome.needsCheck) throw new Error("the core asked again for answers to the same material");
    return { outcome, request };
  }

  /** Applies a command that must succeed; returns its value. */
  ok(actor: Actor, command: Command): CommandValue {
    const outcome = this.apply(actor, command);
    if (outcome.error) throw new Error(`${command.type} refused: ${JSON.stringify(outcome.error)}`);
    if (outcome.needsCheck) throw new Error(`${command.type} waits for a check; use checked()`);
    return outcome.value as CommandValue;
  }

  /** Applies a command that must be refused; returns the refusal. */
  refused(actor: Actor, command: Command): Refusal {
    const outcome = this.apply(actor, command);
    if (!outcome.error) throw new Error(`${command.type} was not refused`);
    return { code: outcome.error.code, issues: outcome.error.issues, changed: outcome.changed };
  }

  /** Claims `stepId` as `who`; returns the claim id (the content of the token). */
  claim(who: Identity, stepId: string): string {
    const value = this.ok(who, { type: "claim", stepId });
    if (value.kind !== "claim") throw new Error("claim returned no claim");
    return value.claimId;
  }

  /** Claims and submits `stepId` as `who` with an accepted submission. */
  work(
    who: Identity,
    stepId: string,
    output: Record<string, unknown> = {},
    extra: { evidence?: { kind: "file" | "link"; ref: string }[]; next?: string; reason?: string } = {},
  ): void {
    const claimId = this.claim(who, stepId);
    this.ok(who, { type: "submit", claimId, output, summary: `Did ${stepId}.`, ...extra });
  }

  /** The open work item of `stepId`. */
  item(stepId: string): WorkItemState {
    const item = this.run.workItems.find((w) => w.stepId === stepId);
    if (!item)
      throw new Error(`no open work item on ${stepId}; open: ${this.run.workItems.map((w) => w.stepId)}`);
    return item;
  }

  /** Decides the open work item of `stepId` with the current snapshot. */
  decide(
    who: Identity,
    stepId: string,
    decision: Extract<Command, { type: "decide" }>["decision"],
    extra: Partial<Omit<Extract<Command, { type: "decide" }>, "type" | "decision">> = {},
  ): Outcome {
    const item = this.item(stepId);
    return this.apply(who, {
      type: "decide",
      workItemId: item.id,
      snapshot: this.run.snapshot,
      decision,
      ...extra,
    });
  }

  /** The run view as a read at `now` returns it. */
  view(): RunView {
    return runView(runAt(this.run, this.def, this.config, this.now), this.def, this.now);
  }

  /** `steps[].state` of the view, keyed by step id. */
  states(): Record<string, string | null> {
    return Object.fromEntries(this.view().steps.map((s) => [s.id, s.state]));
  }
}
