// The process map as a graph (authoring/process-maps.md): lanes, cards, decision points, ends. Pure.
import type { Process, Step } from "@baton/process";
import { branchMembership, stepNext } from "@baton/process/steps";

/** A lane: one performer (process-maps.md "A lane for each performer"). */
export interface MapLane {
  id: string;
  label: string;
}

/** What a node of the map is. */
export type MapNodeKind = "start" | "step" | "decision" | "end" | "fork" | "join";

/** One node: a step's card, a decision point, a start or end marker, or a parallel fork/join bar. */
export interface MapNode {
  id: string;
  kind: MapNodeKind;
  lane: string;
  /** The step this node draws (cards, end markers, bars), or the step a decision point follows. */
  stepId: string | null;
  /** The step's kind for cards (`agent`, `task`, `approve`, `wait`, …). */
  stepKind: Step["kind"] | null;
  /** The card's title (the id read as words), or the end marker's outcome. */
  label: string;
  /** Instructions or what is waited for, for cards. */
  text: string;
  /** Output fields, evidence kinds, checks, due, and what a rejection does without `on_reject`. */
  badges: string[];
}

/** How an edge is drawn: rejections dashed (process-maps.md). */
export type MapEdgeKind = "flow" | "route" | "approved" | "rejected" | "timeout" | "branch";

/** One line of the map. */
export interface MapEdge {
  id: string;
  from: string;
  to: string;
  kind: MapEdgeKind;
  /** `when` text, `Approved`, `Rejected`, `Timed out`; empty for a plain line. */
  label: string;
}

/** A whole map, with nodes and edges in the file's order. */
export interface ProcessMap {
  lanes: MapLane[];
  nodes: MapNode[];
  edges: MapEdge[];
}

/** `check_vendor` → `Check vendor` (process-maps.md: "Give step ids that read as actions"). */
export function humanize(id: string): string {
  const words = id.replace(/[_-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const START = "start";
const decisionId = (stepId: string) => `${stepId}.decision`;
const joinId = (parallelId: string) => `${parallelId}.join`;
const endId = (stepId: string) => stepId;

function performerLane(step: Step): MapLane | null {
  if (step.kind === "agent") return { id: "agent", label: "Agent" };
  if (step.kind === "task" || step.kind === "approve") {
    const person = step.person;
    const label =
      person === "initiator" ? "Initiator" : person.includes(".") ? `Person in ${person}` : humanize(person);
    return { id: `person:${person}`, label };
  }
  return null;
}

function badgesOf(step: Step): string[] {
  const badges: string[] = [];
  if ((step.kind === "agent" || step.kind === "task") && step.output) {
    const names = Object.keys(step.output);
    if (names.length > 0) badges.push(`Output: ${names.join(", ")}`);
  }
  if ((step.kind === "agent" || step.kind === "task") && step.evidence && step.evidence.length > 0) {
    badges.push(`Evidence: ${step.evidence.join(", ")}`);
  }
  if ((step.kind === "agent" || step.kind === "task") && step.check !== undefined && step.check !== null) {
    badges.push("Check");
  }
  if ((step.kind === "agent" || step.kind === "task" || step.kind === "approve") && step.due) {
    badges.push(`Due ${step.due}`);
  }
  if (step.kind === "approve" && step.onReject === null) badges.push("Rejected: the run ends rejected");
  return badges;
}

function textOf(step: Step): string {
  switch (step.kind) {
    case "agent":
    case "task":
    case "approve":
      return step.instructions;
    case "wait":
      return `Wait ${step.duration}`;
    case "wait_until":
      return `Wait until ${step.path}`;
    case "wait_for":
      return `Wait for the event ${step.event}${step.timeout ? `, at most ${step.timeout}` : ""}`;
    case "parallel":
      return `Start together: ${step.branches.map(humanize).join(", ")}`;
    case "finish":
      return step.outcome;
    default: {
      const unreachable: never = step;
      return String(unreachable);
    }
  }
}

/**
 * The map of a valid process (authoring/process-maps.md "How each part is drawn"):
 *
 * - a Start marker leads into the first step;
 * - lanes: `Agent` for agent steps, then one per role or person named in task and approve steps, in
 *   first-use order; waits, parallel bars and finishes sit in the lane of the step before them;
 * - each step is a card with its kind, its id read as words, its instructions and badges;
 * - a `next` list becomes a decision point after the step, one line per route labelled with `when`;
 * - an approval has an `Approved` line forward and, with `on_reject`, a dashed `Rejected` line back;
 * - a `wait_for` with `on_timeout` has a `Timed out` line;
 * - a `parallel:` step is a fork bar with a line to each branch entry, and its branches meet at a join
 *   bar before its `next`;
 * - a `finish` is an End marker with the outcome.
 *
 * Every step of the file appears, and every route it declares appears as one edge.
 */
export function processMap(process: Pick<Process, "steps">): ProcessMap {
  const p = process as Process;
  const steps = p.steps;
  const lanes = new Map<string, MapLane>();
  if (steps.some((s) => s.kind === "agent")) lanes.set("agent", { id: "agent", label: "Agent" });
  for (const step of steps) {
    const lane = performerLane(step);
    if (lane && !lanes.has(lane.id)) lanes.set(lane.id, lane);
  }

  const edges: MapEdge[] = [];
  const addEdge = (from: string, to: string, kind: MapEdgeKind, label = "") =>
    edges.push({ id: `e${edges.length}`, from, to, kind, label });
  const branches = branchMembership(p);
  const target = (to: string, from: Step): string => {
    if (to !== "join") return to;
    const membership = branches.get(from.id);
    return membership ? joinId(membership.parallel) : to;
  };

  // Lines out of each step, in the file's order.
  for (const step of steps) {
    if (step.kind === "finish") continue;
    if (step.kind === "parallel") {
      for (const entry of step.branches) addEdge(step.id, entry, "branch");
      const after = stepNext(p, step.id);
      if (typeof after === "string") addEdge(joinId(step.id), after, "flow");
      continue;
    }
    const next = stepNext(p, step.id);
    if (Array.isArray(next)) {
      addEdge(step.id, decisionId(step.id), "flow");
      for (const route of next)
        addEdge(decisionId(step.id), target(route.to, step), "route", route.when ?? "");
    } else if (typeof next === "string") {
      if (step.kind === "approve") addEdge(step.id, target(next, step), "approved", "Approved");
      else addEdge(step.id, target(next, step), "flow");
    }
    if (step.kind === "approve" && step.onReject !== null)
      addEdge(step.id, step.onReject, "rejected", "Rejected");
    if (step.kind === "wait_for" && step.onTimeout !== null) {
      addEdge(step.id, target(step.onTimeout, step), "timeout", "Timed out");
    }
  }

  // Lanes of steps without a performer: the lane of the step before them (the first line into them
  // that is not a rejection), else of the step listed before them.
  const laneOf = new Map<string, string>();
  const fallbackLane = [...lanes.keys()][0] ?? "server";
  for (const step of steps) {
    const lane = performerLane(step);
    if (lane) laneOf.set(step.id, lane.id);
  }
  const stepOfNode = (nodeId: string) => nodeId.replace(/\.(decision|join)$/, "");
  for (let pass = 0; pass < steps.length; pass++) {
    let changed = false;
    steps.forEach((step, i) => {
      if (laneOf.has(step.id)) return;
      const into = edges.find(
        (e) => e.to === step.id && e.kind !== "rejected" && laneOf.has(stepOfNode(e.from)),
      );
      const before = steps[i - 1];
      const lane = into
        ? laneOf.get(stepOfNode(into.from))
        : i === 0
          ? fallbackLane
          : before && laneOf.get(before.id);
      if (lane) {
        laneOf.set(step.id, lane);
        changed = true;
      }
    });
    if (!changed) break;
  }
  if ([...laneOf.values()].includes("server") || lanes.size === 0) {
    lanes.set("server", { id: "server", label: "Server" });
  }

  const nodes: MapNode[] = [];
  const first = steps[0];
  const lane = (stepId: string) => laneOf.get(stepId) ?? fallbackLane;
  if (first) {
    nodes.push({
      id: START,
      kind: "start",
      lane: lane(first.id),
      stepId: null,
      stepKind: null,
      label: "Start",
      text: "",
      badges: [],
    });
    edges.unshift({ id: "start", from: START, to: first.id, kind: "flow", label: "" });
  }
  for (const step of steps) {
    if (step.kind === "finish") {
      nodes.push({
        id: endId(step.id),
        kind: "end",
        lane: lane(step.id),
        stepId: step.id,
        stepKind: "finish",
        label: step.outcome,
        text: `End: ${step.outcome}`,
        badges: [],
      });
      continue;
    }
    const card: MapNode = {
      id: step.id,
      kind: step.kind === "parallel" ? "fork" : "step",
      lane: lane(step.id),
      stepId: step.id,
      stepKind: step.kind,
      label: humanize(step.id),
      text: textOf(step),
      badges: badgesOf(step),
    };
    nodes.push(card);
    if (Array.isArray(stepNext(p, step.id))) {
      nodes.push({
        id: decisionId(step.id),
        kind: "decision",
        lane: card.lane,
        stepId: step.id,
        stepKind: null,
        label: `Decision after ${humanize(step.id)}`,
        text: "",
        badges: [],
      });
    }
    if (step.kind === "parallel") {
      nodes.push({
        id: joinId(step.id),
        kind: "join",
        lane: card.lane,
        stepId: step.id,
        stepKind: null,
        label: `Join of ${humanize(step.id)}`,
        text: "",
        badges: [],
      });
    }
  }
  const used = new Set(nodes.map((n) => n.lane));
  return { lanes: [...lanes.values()].filter((l) => used.has(l.id)), nodes, edges };
}
