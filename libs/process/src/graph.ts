/**
 * The step graph rules: reachability, the last step, acyclicity (specification §2.2) and the
 * branch rules of the parallel profile (profiles/parallel.md §2).
 *
 * The validator hands over only what it could read: a step without a valid, unique id or a single
 * kind, or an edge that names no step, is left out and `complete` is false. Rules whose answer a
 * missing edge could change (reachability, "outside routes into a branch", `join` outside a branch,
 * "reaches join", `on_reject` inside a branch) then stay silent rather than report consequences of
 * an issue already reported. Rules that hold on any subgraph (cycles, a step in two branches, a
 * branch routing to a finish or to its parallel step, nesting) are always checked.
 *
 * Decisions where the profile is silent (each reported where the mistake is written, so one
 * mistake is one issue):
 * - A branch is walked from its entry until it leaves its branch. The steps reachable from the
 *   first step without entering a branch (no `parallel:` edge, no branch entry, no step that routes
 *   on to `join`) are the main line; a branch step routing to one of them is reported at that edge
 *   ("outside this branch") and the branch stops there, rather than taking the main line in and
 *   reporting its steps.
 * - A step reached by two branches stays in the first one walked (parallel steps in file order,
 *   entries as listed); the edge of the other branch that reaches it is reported, as is a second
 *   parallel step listing the same entry.
 * - A step whose branch mistake is reported counts as reaching `join`, so the steps before it do
 *   not each repeat it as "never reaches join".
 * - A cycle is reported once, at the edge that closes it (the first found by one depth-first walk);
 *   a cycle of more than six steps is shown by its first three, its last and its length.
 *
 * Every rule here is linear in the number of steps and edges.
 */

import { formatCount } from "./issue-limits.ts";
import type { Issues } from "./node-access.ts";
import type { Position } from "./position.ts";
import type { StepKind } from "./types.ts";

/** One edge as written: its target (a step index or `join`) and where it is written. */
export interface GTarget {
  to: number | "join";
  at: Position;
  /** The key path of the edge for messages: `steps[2].next`, `steps[0].next[1]`. */
  path: string;
}

/** A step as the graph rules see it. `null` entries in the list are steps that could not be read. */
export interface GStep {
  index: number;
  id: string;
  kind: StepKind;
  path: string;
  at: Position;
  /** Explicit `next` targets (one, or each route), or null when `next` is absent. */
  next: GTarget[] | null;
  onReject: GTarget | null;
  onTimeout: GTarget | null;
  /** Branch entries of a `parallel:` step. */
  branches: GTarget[] | null;
}

/** Branch membership of a step: its parallel step and its branch entry (both step indexes). */
export interface Membership {
  parallel: number;
  entry: number;
}

/** What the graph rules found besides issues. */
export interface GraphResult {
  /** Each branch step's membership (index → parallel step and entry). */
  members: Map<number, Membership>;
}

type EdgeKind = "next" | "default" | "on_reject" | "on_timeout" | "parallel";

interface Edge {
  from: number;
  to: number;
  kind: EdgeKind;
  at: Position;
  path: string;
}

/** Cycles of at most this many steps are spelled out whole; longer ones are shortened. */
const CYCLE_SHOWN = 6;

/**
 * A cycle for messages: `a → b → a`, or for a long one its first three steps, its last, and its
 * length (`s0 → s1 → s2 → … → s4999 → s0, 5,000 steps`), so a message stays short however long
 * the cycle is.
 */
function cycleText(ids: (k: number) => string, length: number, closing: string): string {
  if (length <= CYCLE_SHOWN) {
    const all: string[] = [];
    for (let k = 0; k < length; k++) all.push(ids(k));
    return [...all, closing].join(" → ");
  }
  const shown = [ids(0), ids(1), ids(2), "…", ids(length - 1), closing];
  return `${shown.join(" → ")}, ${formatCount(length)} steps`;
}

/** The `next` and `on_timeout` targets of a step: the edges that make up a branch (parallel.md §2). */
function flowTargets(s: GStep): readonly GTarget[] {
  const next = s.next ?? [];
  return s.onTimeout ? [...next, s.onTimeout] : next;
}

/**
 * The main line: the steps reachable from the first step, and from each parallel step's
 * continuation, without entering a branch — no `parallel:` edge is followed, and no branch entry
 * and no step that routes on to `join` is entered. A branch step that routes to one of these has
 * left its branch; that edge is the mistake (parallel.md §2), reported where it is written, and
 * the branch stops there.
 */
function mainLine(steps: readonly (GStep | null)[]): Set<number> {
  const entries = new Set<number>();
  const toJoin = new Set<number>(); // steps that reach join following next and on_timeout
  const before: number[][] = steps.map(() => []);
  const queue: number[] = [];
  for (const s of steps) {
    if (s === null) continue;
    for (const t of s.branches ?? []) if (t.to !== "join") entries.add(t.to);
    // A parallel step is never in a branch (nesting is refused), so it never joins one.
    if (s.kind === "parallel") continue;
    for (const t of flowTargets(s)) {
      if (t.to !== "join") before[t.to]?.push(s.index);
      else if (!toJoin.has(s.index)) {
        toJoin.add(s.index);
        queue.push(s.index);
      }
    }
  }
  for (let q = 0; q < queue.length; q++) {
    for (const b of before[queue[q] as number] ?? []) {
      if (!toJoin.has(b)) {
        toJoin.add(b);
        queue.push(b);
      }
    }
  }
  const line = new Set<number>();
  const walk: number[] = [];
  const enter = (i: number) => {
    if (steps[i] && !line.has(i) && !entries.has(i) && !toJoin.has(i)) {
      line.add(i);
      walk.push(i);
    }
  };
  // The first step can never be a branch entry; it starts the main line even when it is wrong.
  if (steps[0]) {
    line.add(0);
    walk.push(0);
  }
  for (const s of steps) {
    if (s?.kind === "parallel") for (const t of s.next ?? []) if (t.to !== "join") enter(t.to);
  }
  for (let q = 0; q < walk.length; q++) {
    const s = steps[walk[q] as number];
    if (!s) continue;
    for (const t of [...flowTargets(s), ...(s.onReject ? [s.onReject] : [])]) {
      if (t.to !== "join") enter(t.to);
    }
    if (s.next === null && s.kind !== "finish") enter(s.index + 1);
  }
  return line;
}

/** Runs every graph rule over `steps` (aligned with the file's step list) and reports issues. */
export function checkGraph(
  steps: readonly (GStep | null)[],
  readComplete: boolean,
  usesParallel: boolean,
  issues: Issues,
): GraphResult {
  // A refused branch entry leaves its branch unknown, which makes the rules below unreliable too.
  let complete = readComplete;
  const idOf = (i: number) => steps[i]?.id ?? `steps[${i}]`;
  const kindOf = (i: number) => steps[i]?.kind ?? null;

  // ---- Branches (parallel profile §2). Each step joins the first branch that reaches it; every
  // step is walked once, so this is linear in the file. ----
  const members = new Map<number, Membership>();
  const flagged = new Set<number>(); // steps with a branch issue, so "reaches join" stays quiet
  const parallels = steps.filter((s): s is GStep => s !== null && s.kind === "parallel");
  const line = parallels.length > 0 ? mainLine(steps) : new Set<number>();
  const walks: { p: GStep; entry: number }[] = [];
  for (const p of parallels) {
    const continuation = new Set((p.next ?? []).flatMap((t) => (t.to === "join" ? [] : [t.to])));
    for (const entry of p.branches ?? []) {
      if (entry.to === "join") continue;
      const e = entry.to;
      const owner = members.get(e);
      if (e === p.index) {
        issues.add(entry.at, `${entry.path}: a parallel step cannot be its own branch`);
      } else if (kindOf(e) === "finish") {
        issues.add(entry.at, `${entry.path}: "${idOf(e)}" is a finish; a branch cannot contain one`);
      } else if (kindOf(e) === "parallel") {
        issues.add(
          entry.at,
          `${entry.path}: "${idOf(e)}" is a parallel step; branches cannot nest in parallel-1`,
        );
      } else if (e === 0) {
        issues.add(
          entry.at,
          `${entry.path}: "${idOf(e)}" is the first step, which starts the run; it cannot start a branch`,
        );
      } else if (continuation.has(e)) {
        issues.add(
          entry.at,
          `${entry.path}: "${idOf(e)}" is where the parallel step continues after the join; it cannot be a branch`,
        );
      } else if (owner !== undefined) {
        // The step stays in its first branch, so every other rule still knows where it belongs.
        issues.add(
          entry.at,
          `${entry.path}: "${idOf(e)}" is already a branch of "${idOf(owner.parallel)}"; a step belongs to one branch`,
        );
        continue;
      } else {
        // Every entry is claimed before any branch is walked, so a walk that reaches another
        // branch's entry reports the edge that does it.
        members.set(e, { parallel: p.index, entry: e });
        walks.push({ p, entry: e });
        continue;
      }
      complete = false;
    }
  }
  for (const { p, entry } of walks) {
    const queue = [entry];
    for (let q = 0; q < queue.length; q++) {
      const m = queue[q] as number;
      const s = steps[m];
      if (!s) continue;
      for (const t of flowTargets(s)) {
        if (t.to === "join") continue;
        const to = t.to;
        const owner = members.get(to);
        if (to === p.index) {
          issues.add(
            t.at,
            `${t.path}: a branch step cannot route to its parallel step "${p.id}"; end the branch with join`,
          );
        } else if (kindOf(to) === "finish") {
          issues.add(
            t.at,
            `${t.path}: a branch step cannot route to a finish ("${idOf(to)}"); end the branch with join`,
          );
        } else if (kindOf(to) === "parallel") {
          issues.add(t.at, `${t.path}: "${idOf(to)}" is a parallel step; branches cannot nest in parallel-1`);
          complete = false;
        } else if (line.has(to)) {
          issues.add(
            t.at,
            `${t.path}: "${idOf(to)}" is outside this branch; a branch step routes only to steps of its branch or join`,
          );
        } else if (owner === undefined) {
          members.set(to, { parallel: p.index, entry });
          queue.push(to);
          continue;
        } else if (owner.parallel !== p.index || owner.entry !== entry) {
          const other =
            owner.entry === to
              ? `starts another branch of "${idOf(owner.parallel)}"`
              : `is in another branch ("${idOf(owner.entry)}" of "${idOf(owner.parallel)}")`;
          issues.add(
            t.at,
            `${t.path}: "${idOf(to)}" ${other}; a step belongs to one branch, so end this one with join`,
          );
        } else continue; // a step of this branch, already walked
        flagged.add(m);
      }
    }
  }

  // ---- Explicit and default edges. ----
  const edges: Edge[] = [];
  const outgoing: Edge[][] = steps.map(() => []);
  const addEdge = (e: Edge) => {
    edges.push(e);
    outgoing[e.from]?.push(e);
  };
  let defaultsKnown = true;
  const lastIndex = steps.length - 1;
  for (const s of steps) {
    if (s === null) continue;
    const inBranch = members.has(s.index);
    for (const t of s.next ?? []) {
      if (t.to !== "join") addEdge({ from: s.index, to: t.to, kind: "next", at: t.at, path: t.path });
    }
    if (s.onReject && s.onReject.to !== "join") {
      addEdge({
        from: s.index,
        to: s.onReject.to,
        kind: "on_reject",
        at: s.onReject.at,
        path: s.onReject.path,
      });
    }
    if (s.onTimeout && s.onTimeout.to !== "join") {
      addEdge({
        from: s.index,
        to: s.onTimeout.to,
        kind: "on_timeout",
        at: s.onTimeout.at,
        path: s.onTimeout.path,
      });
    }
    for (const t of s.branches ?? []) {
      if (t.to !== "join") addEdge({ from: s.index, to: t.to, kind: "parallel", at: t.at, path: t.path });
    }
    if (s.next !== null || s.kind === "finish") continue;
    if (inBranch) {
      issues.add(
        s.at,
        `${s.path}: a step in a branch must name next (a step of its branch, or join); the following-step default does not apply inside a branch`,
      );
      flagged.add(s.index);
    } else if (s.index === lastIndex) {
      issues.add(s.at, `${s.path}: a non-finish step that is last in the list must name next`);
    } else if (steps[s.index + 1]) {
      addEdge({ from: s.index, to: s.index + 1, kind: "default", at: s.at, path: s.path });
    } else defaultsKnown = false;
  }

  // ---- Acyclicity on next and on_timeout (parallel and join edges exempt), one depth-first walk.
  // Each back edge closes a cycle and is reported once, with the cycle shortened when long. Steps
  // on a cycle are flagged: that they never reach join is the cycle's consequence, not a second
  // mistake. A frame's `low` is the lowest stack position a back edge from its subtree returned
  // to; the frame is on a cycle when that is at or below its own position. ----
  const forward = (i: number) =>
    (outgoing[i] ?? []).filter(
      (e) =>
        e.kind === "next" ||
        e.kind === "on_timeout" ||
        (e.kind === "default" && (defaultsKnown || !usesParallel)),
    );
  const rule = "following next and on_timeout no step may be visited twice; only on_reject goes back";
  const state = new Uint8Array(steps.length); // 0 new, 1 on stack, 2 done
  const position = new Int32Array(steps.length); // stack position while on the stack
  type Frame = { node: number; edges: Edge[]; next: number; low: number };
  for (let root = 0; root < steps.length; root++) {
    if (state[root] !== 0 || steps[root] === null) continue;
    const stack: Frame[] = [{ node: root, edges: forward(root), next: 0, low: Number.POSITIVE_INFINITY }];
    state[root] = 1;
    position[root] = 0;
    while (stack.length > 0) {
      const depth = stack.length - 1;
      const top = stack[depth] as Frame;
      if (top.next >= top.edges.length) {
        state[top.node] = 2;
        stack.pop();
        if (top.low <= depth) flagged.add(top.node);
        const parent = stack[depth - 1];
        if (parent && top.low < parent.low) parent.low = top.low;
        continue;
      }
      const e = top.edges[top.next++] as Edge;
      if (state[e.to] === 1) {
        const from = position[e.to] as number;
        if (from < top.low) top.low = from;
        // A wait_for whose next (or default) and on_timeout both return to one step closes one
        // cycle: it is reported once, at next. (Routes of a list never repeat a target.)
        if (e.kind === "on_timeout" && top.edges.some((x) => x !== e && x.to === e.to)) continue;
        const ids = (k: number) => idOf((stack[from + k] as Frame).node);
        const cycle = cycleText(ids, depth - from + 1, idOf(e.to));
        if (e.kind === "default") {
          issues.add(
            e.at,
            `${e.path}: its default next, the following step "${idOf(e.to)}", creates a cycle (${cycle}); ${rule}`,
          );
        } else {
          issues.add(e.at, `${e.path}: creates a cycle (${cycle}); ${rule}`);
        }
      } else if (state[e.to] === 0 && steps[e.to]) {
        state[e.to] = 1;
        position[e.to] = stack.length;
        stack.push({ node: e.to, edges: forward(e.to), next: 0, low: Number.POSITIVE_INFINITY });
      }
    }
  }

  // ---- Rules that need every edge. ----
  if (complete) {
    // Nothing outside the branches routes into one, and join is only for branch steps.
    for (const s of steps) {
      if (s === null || members.has(s.index)) continue;
      for (const t of flowTargets(s)) {
        if (t.to === "join" && usesParallel)
          issues.add(t.at, `${t.path}: join is allowed only inside a parallel branch`);
      }
    }
    for (const e of edges) {
      if (e.kind === "parallel" || members.has(e.from)) continue;
      const into = members.get(e.to);
      if (into === undefined) continue;
      const where = `inside a branch of "${idOf(into.parallel)}"`;
      if (e.kind === "on_reject") {
        issues.add(
          e.at,
          `${e.path}: "${idOf(e.to)}" is ${where}; from outside a branch, on_reject may target the parallel step or a step before it, not a branch step`,
        );
      } else if (e.kind === "default") {
        issues.add(
          e.at,
          `${e.path}: its default next, the following step "${idOf(e.to)}", is ${where}; name next`,
        );
      } else if (e.from === into.parallel) {
        issues.add(
          e.at,
          `${e.path}: "${idOf(e.to)}" is a step of this parallel step's branch "${idOf(into.entry)}"; next names where the run continues after every branch has joined, a step outside the branches`,
        );
      } else {
        issues.add(e.at, `${e.path}: "${idOf(e.to)}" is ${where}; only the parallel step starts a branch`);
      }
    }
    // on_reject inside a branch stays in that branch.
    for (const [m, where] of members) {
      const s = steps[m];
      if (!s?.onReject || s.onReject.to === "join") continue;
      const target = members.get(s.onReject.to);
      if (!target || target.parallel !== where.parallel || target.entry !== where.entry) {
        issues.add(
          s.onReject.at,
          `${s.onReject.path}: "${idOf(s.onReject.to)}" is outside this branch; on_reject inside a branch targets a step of the same branch`,
        );
        flagged.add(m);
      }
    }
    // Every branch step reaches join: one walk back from join over the branch edges. Other rules
    // imply it, so it speaks only when they are silent; a step whose mistake is already reported
    // counts as reaching join, so the steps before it do not repeat that mistake.
    const before = new Map<number, number[]>();
    const reaches = new Set<number>();
    const queue: number[] = [];
    for (const m of members.keys()) {
      const s = steps[m];
      if (!s) continue;
      let seed = flagged.has(m);
      for (const t of flowTargets(s)) {
        if (t.to === "join") seed = true;
        else if (members.has(t.to)) {
          const list = before.get(t.to);
          if (list) list.push(m);
          else before.set(t.to, [m]);
        }
      }
      if (seed) {
        reaches.add(m);
        queue.push(m);
      }
    }
    for (let q = 0; q < queue.length; q++) {
      for (const b of before.get(queue[q] as number) ?? []) {
        if (!reaches.has(b)) {
          reaches.add(b);
          queue.push(b);
        }
      }
    }
    for (const m of members.keys()) {
      const s = steps[m];
      if (s && !reaches.has(m)) {
        issues.add(s.at, `${s.path}: never reaches join; every step in a branch must end at join`);
      }
    }
    // Every step is reachable from the first.
    if (steps[0]) {
      const reached = new Set<number>([0]);
      const queue = [0];
      for (let q = 0; q < queue.length; q++) {
        for (const e of outgoing[queue[q] as number] ?? []) {
          if (!reached.has(e.to)) {
            reached.add(e.to);
            queue.push(e.to);
          }
        }
      }
      for (const s of steps) {
        if (s && !reached.has(s.index)) {
          issues.add(s.at, `${s.path}: step "${s.id}" cannot be reached from the first step`);
        }
      }
    }
  }

  return { members };
}
