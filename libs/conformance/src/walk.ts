import { randomUUID } from "node:crypto";
import type { McpSession } from "./mcp.ts";

/**
 * Small steps of a run walked over MCP, shared by the timer suites: find an agent's `get_work` item
 * or a person's work item, claim and submit, decide. Every page of `get_work` is read, so runs of
 * earlier tests on the same deployment never hide the one a test is looking for.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read response shapes dynamically
type Data = any;

/** Every `get_work` item of `session` (all pages), optionally for one process. */
export async function allWork(session: McpSession, process?: string): Promise<Data[]> {
  const items: Data[] = [];
  let cursor: string | null = null;
  do {
    const page: Data = await session.ok("get_work", {
      limit: 100,
      ...(process ? { process } : {}),
      ...(cursor ? { cursor } : {}),
    });
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/** The agent's `get_work` item for `stepId` of `runId`, or undefined when it is not listed. */
export async function agentItem(agent: McpSession, runId: string, stepId: string): Promise<Data | undefined> {
  return (await allWork(agent)).find((i) => i.runId === runId && i.stepId === stepId);
}

/** The person's `get_work` entry (`{ runId, …, workItem }`) for `stepId` of `runId`, or undefined. */
export async function personEntry(
  person: McpSession,
  runId: string,
  stepId: string,
): Promise<Data | undefined> {
  return (await allWork(person)).find((i) => i.runId === runId && i.workItem.stepId === stepId);
}

/** Claims `stepId` of `runId` through the exact call its `get_work` item carries; throws if unlisted. */
export async function claimStep(agent: McpSession, runId: string, stepId: string): Promise<Data> {
  const item = await agentItem(agent, runId, stepId);
  if (!item) throw new Error(`${agent.label}: get_work does not list ${stepId} of ${runId}`);
  return agent.ok("claim", { ...item.claim.arguments, requestId: randomUUID() });
}

/** A submission's fields (tools.md submit), `summary` defaulted. */
export interface Work {
  output: Record<string, unknown>;
  evidence?: { kind: "file" | "link"; ref: string }[];
  summary?: string;
  next?: string;
  reason?: string;
}

/** Claims and submits `stepId`; returns the run view. */
export async function doStep(agent: McpSession, runId: string, stepId: string, work: Work): Promise<Data> {
  const claim = await claimStep(agent, runId, stepId);
  return agent.ok("submit", { token: claim.token, summary: `Did ${stepId}.`, ...work });
}

/** Decides the open work item of `stepId` from a fresh `get_run` (its snapshot is current). */
export async function decideStep(
  person: McpSession,
  runId: string,
  stepId: string,
  decision: Record<string, unknown>,
): Promise<Data> {
  const view = await person.ok("get_run", { runId });
  const item = view.workItems.find((w: Data) => w.stepId === stepId);
  if (!item) throw new Error(`run ${runId} has no open work item on ${stepId}`);
  return person.ok("decide", { ...item.decide.arguments, requestId: randomUUID(), ...decision });
}

/** The run view's entry for `stepId` in `steps[]`. */
export function stepOf(view: Data, stepId: string): Data {
  const step = view.steps.find((s: Data) => s.id === stepId);
  if (!step) throw new Error(`the run view has no step ${stepId}`);
  return step;
}

/** A link evidence item. */
export const link = (ref: string) => ({ kind: "link" as const, ref });
