import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseProcess } from "@baton/process";
import { expect } from "vitest";
import type { McpSession, Result } from "./mcp.ts";

/**
 * The conformance suite's harness: one server under test per suite file, the conformance fixtures and
 * this suite's own processes published once, MCP sessions per identity (every response validated
 * against the official schemas by {@link McpSession}), and the small steps every scenario repeats
 * — find work with `get_work` as an agent or a person would, claim it, decide it.
 *
 * The scenarios (`scenarios/`) and this file see the server only through {@link ConformanceTarget}:
 * MCP sessions for identities, publication as an operator, and a manual clock when the server has
 * one. Nothing here reaches into Baton, so the portable runner (issue #18) can lift them as they are;
 * the runners (`*.test.ts`) are what make a Baton deployment a target.
 */

/** Who a session acts as: an agent, or a person with groups and maybe the operator role; organization `default` unless given. */
export type Identity =
  | { kind: "agent"; id: string; org?: string }
  | { kind: "person"; id: string; groups?: string[]; operator?: boolean; org?: string };

/** What publishing a process answered: its version number, and whether nothing changed. */
export interface Published {
  version: number;
  unchanged: boolean;
}

/** A clock the tests move: the server's time (epoch ms), and a move forward that returns once every timer due by then was applied. */
export interface ManualClock {
  now(): Promise<number>;
  advance(ms: number): Promise<number>;
}

/**
 * One reply of a scripted evaluator to one question (profiles/check.md §2–§3): an answer (`json`, as
 * the model would give it), text that is not one (`raw`, malformed), an answer that passes any
 * threshold (`pass`), an HTTP error, no answer until the server's time-out (`hang`: slow), the
 * connection dropped (`down`), or no answer until the test releases it (`hold`, then a pass).
 */
export type EvaluatorReply =
  | { json: unknown }
  | { raw: string }
  | { pass: true }
  | { status: number; text?: string }
  | "hang"
  | "down"
  | "hold";

/** One question the evaluator was asked: the script marker of the submission, and the scripted `ask` it matched. */
export interface SeenQuestion {
  marker: string | null;
  ask: string | null;
  body: { model: string; messages: { role: string; content: string }[] };
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The evaluator the server under test is configured with, scripted by the test (the check profile):
 * a submission whose `summary` carries `[script:<marker>]` is answered from the script of that
 * marker — per question (a piece of its `ask`), one reply per attempt, the last repeating; anything
 * unscripted is answered so that it passes.
 */
export interface ScriptedEvaluator {
  /** The model name the server records on every verdict. */
  model: string;
  script(marker: string, replies: Record<string, EvaluatorReply[]>): void;
  /** Every question asked about submissions carrying `marker`, in arrival order. */
  seen(marker: string): SeenQuestion[];
  /** Answers every request of `marker` held by a `hold` reply, with a passing answer. */
  release(marker: string): void;
}

/**
 * The server under test, as the scenarios use it. `publish` imports and publishes a process folder in
 * `org` with roles bound to groups, and rejects with the server's issues when it is refused (§2, §7).
 */
export interface ConformanceTarget {
  session(who: Identity): Promise<McpSession>;
  publish(folder: string, bindings?: Record<string, string>, org?: string): Promise<Published>;
  /** Present when the server offers a manual clock; the timed scenarios need it. */
  clock?: ManualClock;
  /** Present when the server's check evaluator is one the test scripts; the check scenarios need it. */
  evaluator?: ScriptedEvaluator;
  stop(): Promise<void>;
}

/** One process to publish before the scenarios run: a folder and its role → group bindings. */
export interface Publication {
  folder: string;
  bindings?: Record<string, string>;
}

const CONFORMANCE_DIR = fileURLToPath(new URL(".", import.meta.url));

/** The specification's core conformance fixtures (conformance/README.md): a conforming server publishes all ten. */
export const CORE_FIXTURES = [
  "blog-publication",
  "contract-review",
  "customer-offboarding",
  "employee-onboarding",
  "expense-reimbursement",
  "incident-postmortem",
  "invoice-approval",
  "major-incident-response",
  "supplier-rfp",
  "support-escalation",
] as const;

/** This suite's processes that a conforming server must refuse at publication (published by their tests). */
export const REFUSED = new Set(["approval-list-next", "branches-key"]);

/**
 * The fixtures and this suite's processes that need a profile (conformance/README.md: "a server
 * publishes each one only if it offers that profile"), by the profile's `describe` name.
 */
export const PROFILE_FIXTURES: Record<string, string> = {
  "major-incident": "parallel-1",
  "vendor-check": "check-1",
};
export const PROFILE_PROCESSES: Record<string, string> = {
  "parallel-agents": "parallel-1",
  "incident-agent-comms": "parallel-1",
  "checked-review": "check-1",
  "advisory-draft": "check-1",
};

export const FIXTURES_DIR = join(CONFORMANCE_DIR, "../../../conformance/fixtures");
export const PROCESSES_DIR = join(CONFORMANCE_DIR, "../processes");
/** The specification's own example (§2), kept in the repository's samples. */
const SPEC_EXAMPLE = join(CONFORMANCE_DIR, "../../../fixtures/supplier-onboarding");

/** A conformance fixture's folder. */
export const fixture = (name: string) => join(FIXTURES_DIR, name);
/** A folder of this suite's own processes. */
export const suiteProcess = (name: string) => join(PROCESSES_DIR, name);

// biome-ignore lint/suspicious/noExplicitAny: scenarios read response shapes dynamically
export type Data = any;

/** Every role of a process folder bound to a group of the same name (as `baton dev` binds its samples). */
export function sameNameBindings(folder: string): Record<string, string> {
  const parsed = parseProcess(readFileSync(join(folder, "PROCESS.md"), "utf8"));
  if (!parsed.ok) throw new Error(`${folder} does not parse`);
  return Object.fromEntries(parsed.process.roles.map((r) => [r, r]));
}

/**
 * What the untimed scenarios need published: the core fixtures, the spec's example and this suite's
 * processes (but those it must refuse), each role bound to the group of the same name.
 */
export function corePublications(): Publication[] {
  const folders = [
    ...CORE_FIXTURES.map(fixture),
    SPEC_EXAMPLE,
    ...readdirSync(PROCESSES_DIR)
      .filter((n) => !REFUSED.has(n) && PROFILE_PROCESSES[n] === undefined)
      .map(suiteProcess),
  ];
  return folders.map((folder) => ({ folder, bindings: sameNameBindings(folder) }));
}

/** The fixtures and suite processes of the profiles in `offered` (`describe.profiles`). */
export function profilePublications(offered: readonly string[]): Publication[] {
  const folders = [
    ...Object.entries(PROFILE_FIXTURES)
      .filter(([, profile]) => offered.includes(profile))
      .map(([name]) => fixture(name)),
    ...Object.entries(PROFILE_PROCESSES)
      .filter(([, profile]) => offered.includes(profile))
      .map(([name]) => suiteProcess(name)),
  ];
  return folders.map((folder) => ({ folder, bindings: sameNameBindings(folder) }));
}

/** A fresh requestId. */
export const rid = () => randomUUID();

/** A base64 body for `upload`. */
export const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** The state of one step in a run view. */
export function stateOf(view: Data, stepId: string): string | null {
  const step = view.steps.find((s: { id: string }) => s.id === stepId);
  if (!step) throw new Error(`no step ${stepId} in the view`);
  return step.state;
}

/** Every step's state in a run view, keyed by id. */
export function statesOf(view: Data): Record<string, string | null> {
  return Object.fromEntries(view.steps.map((s: { id: string; state: string | null }) => [s.id, s.state]));
}

/** Asserts a refused result and returns its error (the test support's one helper for it). */
export { refused } from "./mcp.ts";

/** One server under test with everything the scenarios need. */
export class Harness {
  target!: ConformanceTarget;
  private readonly sessions = new Map<string, McpSession>();

  constructor(private readonly start: () => Promise<ConformanceTarget>) {}

  /**
   * Starts the server and publishes `publications` (by default {@link corePublications} and the
   * {@link profilePublications} of the profiles its `describe` lists), each once.
   */
  async setup(publications?: Publication[]): Promise<void> {
    this.target = await this.start();
    let all = publications;
    if (!all) {
      const reader = await this.target.session({ kind: "agent", id: "a_setup" });
      const offered: string[] = (await reader.ok("describe")).profiles;
      await reader.close();
      all = [...corePublications(), ...profilePublications(offered)];
    }
    const done = new Set<string>();
    for (const { folder, bindings = {} } of all) {
      const key = JSON.stringify([folder, bindings]);
      if (done.has(key)) continue;
      done.add(key);
      await this.target.publish(folder, bindings);
    }
  }

  async teardown(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.close()));
    await this.target?.stop();
  }

  /** The server's manual clock; a timed scenario fails at once on a server without one. */
  get clock(): ManualClock {
    if (!this.target.clock)
      throw new Error("this scenario moves time: the server under test needs a manual clock");
    return this.target.clock;
  }

  /** The server's scripted evaluator; a check scenario fails at once on a server without one. */
  get evaluator(): ScriptedEvaluator {
    if (!this.target.evaluator)
      throw new Error("this scenario scripts the check's evaluator: the server under test needs one");
    return this.target.evaluator;
  }

  /** The MCP session of an identity, created once. */
  async as(who: Identity): Promise<McpSession> {
    const key = JSON.stringify(who);
    let session = this.sessions.get(key);
    if (!session) {
      session = await this.target.session(who);
      this.sessions.set(key, session);
    }
    return session;
  }

  /** The sessions of several identities at once, under the same keys. */
  async sessionsOf<K extends string>(who: Record<K, Identity>): Promise<Record<K, McpSession>> {
    const entries = await Promise.all(
      Object.entries<Identity>(who).map(async ([key, identity]) => [key, await this.as(identity)] as const),
    );
    return Object.fromEntries(entries) as Record<K, McpSession>;
  }

  /** An agent identity's session (org `default` unless given). */
  agent(id: string, org?: string): Promise<McpSession> {
    return this.as(org ? { kind: "agent", id, org } : { kind: "agent", id });
  }

  /** A person's session. */
  person(id: string, groups: string[] = [], options: { operator?: boolean; org?: string } = {}) {
    return this.as({ kind: "person", id, groups, ...options });
  }

  /** An operator (a person with the operator role). */
  operator(id = "olga@example.com", org?: string) {
    return this.person(id, [], org ? { operator: true, org } : { operator: true });
  }

  /** Pages through `get_work` until `match` finds an item, or returns undefined. */
  async findWork(session: McpSession, match: (item: Data) => boolean, process?: string): Promise<Data> {
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const args: Record<string, unknown> = { limit: 100 };
      if (process) args.process = process;
      if (cursor) args.cursor = cursor;
      const work = await session.ok("get_work", args);
      const found = work.items.find(match);
      if (found) return found;
      if (!work.nextCursor) return undefined;
      cursor = work.nextCursor;
    }
    throw new Error("get_work did not end within 100 pages");
  }

  /** The agent `get_work` item of `stepId` in `runId`, or undefined. */
  agentItem(agent: McpSession, runId: string, stepId: string, process?: string): Promise<Data> {
    return this.findWork(agent, (i) => i.runId === runId && i.stepId === stepId, process);
  }

  /** Finds the step in `get_work` and claims it with the exact call the item carries; returns the claim. */
  async claim(agent: McpSession, runId: string, stepId: string): Promise<Data> {
    const item = await this.agentItem(agent, runId, stepId);
    expect(item, `get_work lists ${stepId} of ${runId} for ${agent.label}`).toBeDefined();
    expect(item.claim.arguments.requestId).toBe("<new UUID>");
    return agent.ok("claim", { ...item.claim.arguments, requestId: rid() });
  }

  /** Claims and submits a step; returns the run view the submission returned. */
  async work(
    agent: McpSession,
    runId: string,
    stepId: string,
    output: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ): Promise<Data> {
    const claim = await this.claim(agent, runId, stepId);
    return agent.ok("submit", { token: claim.token, output, summary: `Did ${stepId}.`, ...extra });
  }

  /** The person's `get_work` entry for the open item of `stepId` in `runId`, or undefined. */
  inboxEntry(person: McpSession, runId: string, stepId: string): Promise<Data> {
    return this.findWork(person, (i) => i.runId === runId && i.workItem?.stepId === stepId);
  }

  /** The person's work item of `stepId` in `runId`, found in their inbox (`get_work`). */
  async workItem(person: McpSession, runId: string, stepId: string): Promise<Data> {
    const entry = await this.inboxEntry(person, runId, stepId);
    expect(entry, `${person.label}'s get_work lists ${stepId} of ${runId}`).toBeDefined();
    return entry.workItem;
  }

  /** Decides the open item of `stepId` with the exact call its work item carries; returns the raw result. */
  async decide(
    person: McpSession,
    runId: string,
    stepId: string,
    decision: string,
    extra: Record<string, unknown> = {},
  ): Promise<Result> {
    const item = await this.workItem(person, runId, stepId);
    expect(item.decide.decisions).toContain(decision);
    return person.call("decide", { ...item.decide.arguments, requestId: rid(), decision, ...extra });
  }

  /** `decide` that must succeed; returns the run view. */
  async decided(
    person: McpSession,
    runId: string,
    stepId: string,
    decision: string,
    extra: Record<string, unknown> = {},
  ): Promise<Data> {
    const result = await this.decide(person, runId, stepId, decision, extra);
    if (!result.ok)
      throw new Error(`${person.label} decide ${decision} on ${stepId}: ${JSON.stringify(result.error)}`);
    return result.data;
  }

  /** Uploads `text` as a file; returns `{ id, sha256, bytes }`. */
  upload(session: McpSession, text: string, fileName = "evidence.txt"): Promise<Data> {
    return session.ok("upload", { fileName, contentType: "text/plain", contentBase64: b64(text) });
  }
}
