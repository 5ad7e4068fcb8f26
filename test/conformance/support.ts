import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseProcess } from "@baton/process";
import { expect } from "vitest";
import { type As, type Deployment, REPO } from "../support/deploy.ts";
import type { McpSession, Result } from "../support/mcp.ts";

/**
 * The conformance suite's harness: one Baton deployment per suite file, the conformance fixtures and
 * this suite's own processes published once, MCP sessions per identity (every response validated
 * against the official schemas by {@link McpSession}), and the small steps every scenario repeats
 * — find work with `get_work` as an agent or a person would, claim it, decide it.
 */

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

export const FIXTURES_DIR = join(REPO, "conformance/fixtures");
export const PROCESSES_DIR = join(REPO, "test/conformance/processes");

// biome-ignore lint/suspicious/noExplicitAny: scenarios read response shapes dynamically
export type Data = any;

/** Every role of a process folder bound to a group of the same name (as `baton dev` binds its samples). */
export function sameNameBindings(folder: string): Record<string, string> {
  const parsed = parseProcess(readFileSync(join(folder, "PROCESS.md"), "utf8"));
  if (!parsed.ok) throw new Error(`${folder} does not parse`);
  return Object.fromEntries(parsed.process.roles.map((r) => [r, r]));
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

/** Asserts a refused result and returns its error. */
export function refused(result: Result, code: string, issues?: string[]): Data {
  expect(result.ok, `expected ${code}, got ${JSON.stringify(result).slice(0, 400)}`).toBe(false);
  if (result.ok) return null;
  expect(result.error.code).toBe(code);
  if (issues) expect(result.error.issues).toEqual(issues);
  return result.error;
}

/** One deployment with everything the scenarios need. */
export class Harness {
  baton!: Deployment;
  private readonly sessions = new Map<string, McpSession>();

  constructor(private readonly start: () => Promise<Deployment>) {}

  /** Starts the deployment and publishes the core fixtures, the spec's example and this suite's processes. */
  async setup(): Promise<void> {
    this.baton = await this.start();
    const folders = [
      ...CORE_FIXTURES.map((n) => join(FIXTURES_DIR, n)),
      join(REPO, "fixtures/supplier-onboarding"),
      ...readdirSync(PROCESSES_DIR)
        .filter((n) => !REFUSED.has(n))
        .map((n) => join(PROCESSES_DIR, n)),
    ];
    for (const folder of folders) await this.baton.publish(folder, sameNameBindings(folder));
  }

  async teardown(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.close()));
    await this.baton?.stop();
  }

  /** The MCP session of an identity, created once. */
  async as(who: As): Promise<McpSession> {
    const key = JSON.stringify(who);
    let session = this.sessions.get(key);
    if (!session) {
      session = await this.baton.session(who);
      this.sessions.set(key, session);
    }
    return session;
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
