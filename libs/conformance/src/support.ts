import { randomUUID } from "node:crypto";
import { expect, TestRunner } from "vitest";
import { corePublications, type Publication, profilePublications } from "./fixtures.ts";
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
  /**
   * Absent when the runner cannot publish on this server (no admin API it knows): the scenarios that
   * publish processes of their own are then skipped, with the reason.
   */
  publish?(folder: string, bindings?: Record<string, string>, org?: string): Promise<Published>;
  /** Why `publish` cannot publish into `org` here (the check is skipped with it), or null when it can. */
  publishRefusal?(org: string): string | null;
  /**
   * The key under which the harness keeps `who`'s session; by default the identity itself. A target
   * that maps identities onto a fixed set of tokens (the runner's `--tokens`) keys by the token it chose.
   */
  key?(who: Identity): string;
  /** Present when the server offers a manual clock; the timed scenarios need it. */
  clock?: ManualClock;
  /** Present when the server's check evaluator is one the test scripts; the check scenarios need it. */
  evaluator?: ScriptedEvaluator;
  stop(): Promise<void>;
}

/**
 * Ends the running test as skipped with `reason` (vitest's `context.skip`): what a scenario needs that
 * the server under test does not offer (a manual clock, a scripted evaluator, publication, identities)
 * is reported as skipped with the reason, never as passed. Outside a test, throws the reason.
 */
export function skipTest(reason: string): never {
  const test = TestRunner.getCurrentTest();
  if (test) test.context.skip(reason);
  throw new Error(reason);
}

// biome-ignore lint/suspicious/noExplicitAny: scenarios read response shapes dynamically
export type Data = any;

export {
  CORE_FIXTURES,
  corePublications,
  FIXTURES_DIR,
  fixture,
  PROCESSES_DIR,
  PROFILE_FIXTURES,
  PROFILE_PROCESSES,
  type Publication,
  profilePublications,
  REFUSED,
  sameNameBindings,
  suiteProcess,
} from "./fixtures.ts";

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
  /** Tells this harness's organizations apart from those of earlier runs against the same server. */
  private readonly runTag = randomUUID().slice(0, 8);
  /** The profiles the server's `describe` lists (§8), read by {@link setup}. */
  offered: string[] = [];
  private readonly sessions = new Map<string, McpSession>();

  constructor(private readonly start: () => Promise<ConformanceTarget>) {}

  /**
   * Starts the server and publishes `publications` (by default {@link corePublications} and the
   * {@link profilePublications} of the profiles its `describe` lists), each once.
   */
  async setup(publications?: Publication[]): Promise<void> {
    this.target = await this.start();
    const reader = await this.target.session({ kind: "agent", id: "a_setup" });
    this.offered = (await reader.ok("describe")).profiles;
    await reader.close();
    // A target that cannot publish was checked for the processes beforehand (the runner's fixtures check).
    if (!this.target.publish) return;
    const all = publications ?? [...corePublications(), ...profilePublications(this.offered)];
    const done = new Set<string>();
    for (const { folder, bindings = {} } of all) {
      const key = JSON.stringify([folder, bindings]);
      if (done.has(key)) continue;
      done.add(key);
      await this.publish(folder, bindings);
    }
  }

  /**
   * Publishes a process folder through the target (see {@link ConformanceTarget.publish}); skips the
   * running test, with the reason, when the target cannot publish.
   */
  publish(folder: string, bindings: Record<string, string> = {}, org?: string): Promise<Published> {
    // Skipped before anything is called, so a skip inside `expect(h.publish(…)).rejects` stays a skip.
    if (!this.target.publish)
      skipTest(
        "publishes a process of its own: the runner cannot publish on this server (Baton's admin API)",
      );
    const refusal = this.target.publishRefusal?.(org ?? "default");
    if (refusal) skipTest(refusal);
    return this.target.publish(folder, bindings, org);
  }

  async teardown(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.close()));
    await this.target?.stop();
  }

  /** Why a test of `profile` cannot run here (the server's `describe` does not list it, §8), or null when it can. */
  missingProfile(profile: string): string | null {
    return this.offered.includes(profile)
      ? null
      : `proves the ${profile} profile, which this server's describe does not list (§8)`;
  }

  /** The server's manual clock; a timed scenario is skipped, with the reason, on a server without one. */
  get clock(): ManualClock {
    if (!this.target.clock)
      skipTest(
        "moves time: needs the server's manual clock (--clock baton against a server that offers one)",
      );
    return this.target.clock;
  }

  /** The server's scripted evaluator; a check scenario is skipped, with the reason, on a server without one. */
  get evaluator(): ScriptedEvaluator {
    if (!this.target.evaluator)
      skipTest(
        "scripts the check profile's evaluator: needs a server configured with an evaluator the test scripts (Baton's own suite)",
      );
    return this.target.evaluator;
  }

  /**
   * An organization of a scenario's own (`<name>-<tag of this run>`), empty at first even when the
   * server kept everything of an earlier run: for scenarios that must see everything of a kind.
   */
  org(name: string): string {
    return `${name}-${this.runTag}`;
  }

  /** The MCP session of an identity, created once. */
  async as(who: Identity): Promise<McpSession> {
    const key = this.target.key?.(who) ?? JSON.stringify(who);
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
