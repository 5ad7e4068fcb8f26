/**
 * Reading a parsed process: steps by id, where a step goes next, and parallel branches
 * (specification §2.2, §3.2; profiles/parallel.md §2).
 */

import type { Process, Route, Step } from "./types.ts";

/** Where a branch step belongs: its `parallel:` step and its branch entry (step ids). */
export interface BranchMembership {
  parallel: string;
  entry: string;
}

const membershipCache = new WeakMap<Process, Map<string, BranchMembership>>();

/** The step with id `id`, or `undefined`. */
export function stepById(process: Process, id: string): Step | undefined {
  return process.steps.find((s) => s.id === id);
}

/**
 * Every branch step of a valid process mapped to its parallel step and branch entry
 * (profiles/parallel.md §2: an entry plus every step reachable from it over `next` and
 * `on_timeout`, stopping at `join`). Steps outside branches are absent. Computed once per process.
 */
export function branchMembership(process: Process): ReadonlyMap<string, BranchMembership> {
  const cached = membershipCache.get(process);
  if (cached) return cached;
  const out = new Map<string, BranchMembership>();
  for (const p of process.steps) {
    if (p.kind !== "parallel") continue;
    for (const entry of p.branches) {
      const queue = [entry];
      while (queue.length > 0) {
        const id = queue.shift() as string;
        if (out.has(id)) continue;
        out.set(id, { parallel: p.id, entry });
        const s = stepById(process, id);
        if (!s || s.kind === "finish" || s.kind === "parallel") continue;
        const targets: string[] = [];
        if (typeof s.next === "string") targets.push(s.next);
        else if (Array.isArray(s.next)) targets.push(...s.next.map((r) => r.to));
        if (s.kind === "wait_for" && s.onTimeout !== null) targets.push(s.onTimeout);
        for (const t of targets) if (t !== "join" && !out.has(t)) queue.push(t);
      }
    }
  }
  membershipCache.set(process, out);
  return out;
}

/**
 * Where `stepId` goes next (§2.2, §3.2): its `next` as written (a step id, `join` inside a branch,
 * or the list of routes `{ to, when? }`), or else the following step in the list. Returns `null`
 * for a finish, for an unknown id, and for a step with no `next` and no following step. A branch
 * step never takes the following-step default (profiles/parallel.md §2), so it returns `null` when
 * it names none (a valid process always names one).
 */
export function stepNext(process: Process, stepId: string): string | Route[] | null {
  const index = process.steps.findIndex((s) => s.id === stepId);
  const step = process.steps[index];
  if (step === undefined || step.kind === "finish") return null;
  if (step.next !== null) return step.next;
  if (branchMembership(process).has(stepId)) return null;
  return process.steps[index + 1]?.id ?? null;
}
