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
 */

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

const arrow = (ids: string[]) => ids.join(" → ");

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

  // ---- Branches (parallel profile §2). ----
  const memberships = new Map<number, Membership[]>();
  const flagged = new Set<number>(); // steps with a branch issue, so "reaches join" stays quiet
  for (const p of steps) {
    if (p === null || p.kind !== "parallel" || p.branches === null) continue;
    const continuation = new Set((p.next ?? []).flatMap((t) => (t.to === "join" ? [] : [t.to])));
    for (const entry of p.branches) {
      if (entry.to === "join") continue;
      const e = entry.to;
      if (e === p.index) {
        issues.add(entry.at, `${entry.path}: a parallel step cannot be its own branch`);
        complete = false;
        continue;
      }
      if (kindOf(e) === "finish") {
        issues.add(entry.at, `${entry.path}: "${idOf(e)}" is a finish; a branch cannot contain one`);
        complete = false;
        continue;
      }
      if (kindOf(e) === "parallel") {
        issues.add(
          entry.at,
          `${entry.path}: "${idOf(e)}" is a parallel step; branches cannot nest in parallel-1`,
        );
        complete = false;
        continue;
      }
      if (e === 0) {
        issues.add(
          entry.at,
          `${entry.path}: "${idOf(e)}" is the first step, which starts the run; it cannot start a branch`,
        );
        complete = false;
        continue;
      }
      if (continuation.has(e)) {
        issues.add(
          entry.at,
          `${entry.path}: "${idOf(e)}" is where the parallel step continues after the join; it cannot be a branch`,
        );
        complete = false;
        continue;
      }
      const seen = new Set<number>([e]);
      const queue = [e];
      while (queue.length > 0) {
        const m = queue.shift() as number;
        const list = memberships.get(m) ?? [];
        if (!list.some((x) => x.parallel === p.index && x.entry === e))
          list.push({ parallel: p.index, entry: e });
        memberships.set(m, list);
        const s = steps[m];
        if (!s) continue;
        const out = [...(s.next ?? []), ...(s.onTimeout ? [s.onTimeout] : [])];
        for (const t of out) {
          if (t.to === "join") continue;
          const to = t.to;
          if (to === p.index) {
            issues.add(
              t.at,
              `${t.path}: a branch step cannot route to its parallel step "${p.id}"; end the branch with join`,
            );
            flagged.add(m);
          } else if (kindOf(to) === "finish") {
            issues.add(
              t.at,
              `${t.path}: a branch step cannot route to a finish ("${idOf(to)}"); end the branch with join`,
            );
            flagged.add(m);
          } else if (kindOf(to) === "parallel") {
            issues.add(
              t.at,
              `${t.path}: "${idOf(to)}" is a parallel step; branches cannot nest in parallel-1`,
            );
            flagged.add(m);
            complete = false;
          } else if (to === 0 || continuation.has(to)) {
            issues.add(
              t.at,
              `${t.path}: "${idOf(to)}" is outside this branch; a branch step routes only to steps of its branch or join`,
            );
            flagged.add(m);
          } else if (!seen.has(to)) {
            seen.add(to);
            queue.push(to);
          }
        }
      }
    }
  }

  const members = new Map<number, Membership>();
  for (const [m, list] of memberships) {
    members.set(m, list[0] as Membership);
    const s = steps[m];
    if (list.length > 1 && s) {
      const names = list.map((x) => `"${idOf(x.entry)}" of "${idOf(x.parallel)}"`);
      issues.add(
        s.at,
        `${s.path}: step "${s.id}" is in more than one branch (${names.join(", ")}); a step belongs to one branch`,
      );
      flagged.add(m);
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

  // ---- Acyclicity on next and on_timeout (parallel and join edges exempt). Steps on a cycle are
  // flagged: that they never reach join is the cycle's consequence, not a second mistake. ----
  const forward = (i: number) =>
    (outgoing[i] ?? []).filter(
      (e) =>
        e.kind === "next" ||
        e.kind === "on_timeout" ||
        (e.kind === "default" && (defaultsKnown || !usesParallel)),
    );
  const state = new Uint8Array(steps.length); // 0 new, 1 on stack, 2 done
  for (let root = 0; root < steps.length; root++) {
    if (state[root] !== 0 || steps[root] === null) continue;
    const stack: { node: number; edges: Edge[]; next: number }[] = [
      { node: root, edges: forward(root), next: 0 },
    ];
    state[root] = 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as (typeof stack)[number];
      if (top.next >= top.edges.length) {
        state[top.node] = 2;
        stack.pop();
        continue;
      }
      const e = top.edges[top.next++] as Edge;
      if (state[e.to] === 1) {
        const from = stack.findIndex((f) => f.node === e.to);
        for (const f of stack.slice(from)) flagged.add(f.node);
        const cycle = arrow([...stack.slice(from).map((f) => idOf(f.node)), idOf(e.to)]);
        const rule = "following next and on_timeout no step may be visited twice; only on_reject goes back";
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
        stack.push({ node: e.to, edges: forward(e.to), next: 0 });
      }
    }
  }

  // ---- Rules that need every edge. ----
  if (complete) {
    // Nothing outside the branches routes into one, and join is only for branch steps.
    for (const s of steps) {
      if (s === null || members.has(s.index)) continue;
      for (const t of [...(s.next ?? []), ...(s.onTimeout ? [s.onTimeout] : [])]) {
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
    // Every branch step reaches join. Other rules imply it, so it speaks only when they are silent.
    const reaches = new Set<number>();
    let changed = true;
    while (changed) {
      changed = false;
      for (const m of members.keys()) {
        if (reaches.has(m)) continue;
        const s = steps[m];
        const out = s ? [...(s.next ?? []), ...(s.onTimeout ? [s.onTimeout] : [])] : [];
        if (out.some((t) => t.to === "join" || reaches.has(t.to))) {
          reaches.add(m);
          changed = true;
        }
      }
    }
    for (const m of members.keys()) {
      const s = steps[m];
      if (s && !reaches.has(m) && !flagged.has(m)) {
        issues.add(s.at, `${s.path}: never reaches join; every step in a branch must end at join`);
      }
    }
    // Every step is reachable from the first.
    if (steps[0]) {
      const reached = new Set<number>([0]);
      const queue = [0];
      while (queue.length > 0) {
        const i = queue.shift() as number;
        for (const e of outgoing[i] ?? []) {
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
