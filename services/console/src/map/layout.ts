// Lays the map out with ELK (elkjs): layers left to right, then lanes as horizontal bands, edges routed by ELK.
import type { ELK, ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api.js";
import type { MapEdge, MapNode, ProcessMap } from "./model.ts";

/** A point in map coordinates (px at 100% zoom). */
export interface Point {
  x: number;
  y: number;
}

/** A positioned node. */
export interface PlacedNode extends MapNode {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A routed edge: its polyline and where its label sits (top-left), if it has one. */
export interface PlacedEdge extends MapEdge {
  points: Point[];
  labelBox: { x: number; y: number; width: number; height: number; lines: string[] } | null;
}

/** A lane's band across the whole map. */
export interface PlacedLane {
  id: string;
  label: string;
  y: number;
  height: number;
}

/** A laid-out map, ready to draw. */
export interface MapLayout {
  width: number;
  height: number;
  lanes: PlacedLane[];
  nodes: PlacedNode[];
  edges: PlacedEdge[];
}

/** Node sizes (px). */
export const SIZES = {
  card: { width: 208, height: 96 },
  decision: { width: 36, height: 36 },
  marker: { width: 36, height: 36 },
  bar: { width: 10, height: 72 },
} as const;

/** Where lane titles go: a column at the left of every band. */
export const LANE_HEADER = 112;
const LANE_PAD = 28;
const CHAR = 6.6;
const LINE = 15;
const LABEL_CHARS = 22;

function sizeOf(node: MapNode) {
  switch (node.kind) {
    case "step":
      return SIZES.card;
    case "decision":
      return SIZES.decision;
    case "start":
    case "end":
      return SIZES.marker;
    case "fork":
    case "join":
      return SIZES.bar;
  }
}

/** Splits a label into lines of at most ~26 characters, on spaces. */
export function wrap(text: string, max = LABEL_CHARS): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > max) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

function labelSize(text: string): { width: number; height: number; lines: string[] } {
  const lines = wrap(text);
  return {
    width: lines.length ? Math.ceil(Math.max(...lines.map((l) => l.length)) * CHAR) + 8 : 0,
    height: lines.length * LINE + 4,
    lines,
  };
}

/** The label's box on the longest horizontal run of the line, just above it. */
function placeLabel(points: Point[], text: string): PlacedEdge["labelBox"] {
  const size = labelSize(text);
  if (size.lines.length === 0 || points.length < 2) return null;
  let best = { from: points[0] as Point, length: -1 };
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1] as Point;
    const b = points[i] as Point;
    const length = Math.abs(b.x - a.x);
    if (a.y === b.y && length > best.length) best = { from: a.x < b.x ? a : b, length };
  }
  const center = best.from.x + Math.max(best.length, 0) / 2;
  return { x: center - size.width / 2, y: best.from.y - size.height - 2, ...size };
}

function elkGraph(map: ProcessMap, positions?: Map<string, Point>): ElkNode {
  const interactive = positions !== undefined;
  // Room between layers for the widest label, which sits on the line between them.
  const labelRoom = Math.max(0, ...map.edges.map((e) => labelSize(e.label).width));
  return {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.edgeRouting": "ORTHOGONAL",
      "elk.spacing.nodeNode": "28",
      "elk.spacing.edgeNode": "16",
      "elk.spacing.edgeEdge": "10",
      "elk.spacing.edgeLabel": "4",
      "elk.layered.spacing.nodeNodeBetweenLayers": String(Math.max(64, labelRoom + 40)),
      "elk.layered.spacing.edgeNodeBetweenLayers": "20",
      "elk.layered.mergeEdges": "false",
      // The file's order is the reading order: lines back (rejections) are the ones reversed.
      "elk.layered.cycleBreaking.strategy": interactive ? "INTERACTIVE" : "MODEL_ORDER",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
      ...(interactive
        ? {
            "elk.interactiveLayout": "true",
            "elk.layered.layering.strategy": "INTERACTIVE",
            "elk.layered.crossingMinimization.strategy": "INTERACTIVE",
            "elk.layered.nodePlacement.strategy": "INTERACTIVE",
          }
        : {}),
    },
    children: map.nodes.map((n) => {
      const size = sizeOf(n);
      const at = positions?.get(n.id);
      return { id: n.id, width: size.width, height: size.height, ...(at ? { x: at.x, y: at.y } : {}) };
    }),
    // Labels are placed on the routed lines afterwards: ELK would make them nodes of their own.
    edges: map.edges.map((e): ElkExtendedEdge => ({ id: e.id, sources: [e.from], targets: [e.to] })),
  };
}

/**
 * Lays out a map: a first ELK pass orders the steps into layers left to right; each node is then put
 * in its lane's band (lanes in the map's order, nodes of one lane and layer stacked), and a second,
 * interactive ELK pass keeps those places and routes every edge orthogonally with its label.
 */
export async function layoutMap(map: ProcessMap, elk: ELK): Promise<MapLayout> {
  const first = await elk.layout(elkGraph(map));
  const placed = new Map((first.children ?? []).map((c) => [c.id, c]));

  // Columns: nodes whose first-pass x is equal share a layer.
  const xs = [...new Set((first.children ?? []).map((c) => c.x ?? 0))].sort((a, b) => a - b);
  const column = (id: string) => xs.indexOf(placed.get(id)?.x ?? 0);
  const stacks = new Map<string, MapNode[]>();
  for (const node of [...map.nodes].sort((a, b) => (placed.get(a.id)?.y ?? 0) - (placed.get(b.id)?.y ?? 0))) {
    const key = `${node.lane}|${column(node.id)}`;
    stacks.set(key, [...(stacks.get(key) ?? []), node]);
  }
  // In each lane and layer, the first node sits on the lane's centre line (so lines run straight
  // along a lane) and the others stack below it, each by its own height.
  const GAP = 40;
  const firstRow = SIZES.card.height;
  const offsets = new Map<string, number>();
  const laneDepth = new Map<string, number>();
  for (const [key, nodes] of stacks) {
    let bottom = 0;
    nodes.forEach((node, i) => {
      const h = sizeOf(node).height;
      const top = i === 0 ? (firstRow - h) / 2 : bottom + GAP;
      offsets.set(node.id, top);
      bottom = i === 0 ? Math.max(top + h, firstRow) : top + h;
    });
    const lane = key.split("|")[0] as string;
    laneDepth.set(lane, Math.max(laneDepth.get(lane) ?? firstRow, bottom));
  }
  const byId = new Map(map.nodes.map((n) => [n.id, n]));
  // ELK keeps the given places where it can, but may push nodes apart to make room for lines. Lanes
  // are bands that must not overlap: when they would, lanes move further apart and ELK runs again.
  let second: ElkNode | null = null;
  let nodes: PlacedNode[] = [];
  let extent: { top: number; bottom: number }[] = [];
  for (let laneGap = LANE_PAD * 2; laneGap <= LANE_PAD * 12; laneGap += LANE_PAD * 2) {
    const laneTop = new Map<string, number>();
    let y = 0;
    for (const l of map.lanes) {
      laneTop.set(l.id, y);
      y += (laneDepth.get(l.id) ?? firstRow) + laneGap;
    }
    const positions = new Map<string, Point>();
    for (const node of map.nodes) {
      positions.set(node.id, {
        x: placed.get(node.id)?.x ?? 0,
        y: (laneTop.get(node.lane) ?? 0) + laneGap / 2 + (offsets.get(node.id) ?? 0),
      });
    }
    second = await elk.layout(elkGraph(map, positions));
    nodes = (second.children ?? []).map((c) => {
      const node = byId.get(c.id) as MapNode;
      return {
        ...node,
        x: (c.x ?? 0) + LANE_HEADER,
        y: c.y ?? 0,
        width: c.width ?? 0,
        height: c.height ?? 0,
      };
    });
    extent = map.lanes.map((l) => {
      const own = nodes.filter((n) => n.lane === l.id);
      return {
        top: Math.min(...own.map((n) => n.y)) - LANE_PAD / 2,
        bottom: Math.max(...own.map((n) => n.y + n.height)) + LANE_PAD / 2,
      };
    });
    if (extent.every((e, i) => i === 0 || (extent[i - 1] as { bottom: number }).bottom <= e.top)) break;
  }

  const edgeById = new Map(map.edges.map((e) => [e.id, e]));
  const edges: PlacedEdge[] = (second?.edges ?? []).map((raw) => {
    const e = raw as ElkExtendedEdge;
    const edge = edgeById.get(e.id) as MapEdge;
    const section = e.sections?.[0];
    const points = section
      ? [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map((p) => ({
          x: p.x + LANE_HEADER,
          y: p.y,
        }))
      : [];
    return { ...edge, points, labelBox: placeLabel(points, edge.label) };
  });

  // Bands: each lane spans its nodes; neighbouring bands meet halfway between them.
  const lanes: PlacedLane[] = map.lanes.map((l, i) => {
    const prev = extent[i - 1];
    const next = extent[i + 1];
    const own = extent[i] as { top: number; bottom: number };
    const top = prev ? (prev.bottom + own.top) / 2 : Math.min(own.top, 0);
    const bottom = next ? (own.bottom + next.top) / 2 : own.bottom;
    return { id: l.id, label: l.label, y: top, height: bottom - top };
  });
  const minY = Math.min(0, ...lanes.map((l) => l.y), ...edges.flatMap((e) => e.points.map((p) => p.y)));
  const shift = minY < 0 ? -minY + 8 : 8;
  for (const n of nodes) n.y += shift;
  for (const e of edges) {
    for (const p of e.points) p.y += shift;
    if (e.labelBox) e.labelBox.y += shift;
  }
  for (const l of lanes) l.y += shift;
  const last = lanes[lanes.length - 1];
  if (last) last.height += 8;
  const width =
    Math.max(
      ...nodes.map((n) => n.x + n.width),
      // An End marker's outcome is written under it, centred.
      ...nodes
        .filter((n) => n.kind === "end")
        .map((n) => n.x + n.width / 2 + ((n.label.length + 5) * 7.5) / 2),
      ...edges.flatMap((e) => e.points.map((p) => p.x)),
      ...edges.map((e) => (e.labelBox ? e.labelBox.x + e.labelBox.width : 0)),
    ) + 16;
  const height = Math.max(
    ...lanes.map((l) => l.y + l.height),
    ...edges.flatMap((e) => e.points.map((p) => p.y + 8)),
  );
  return { width, height, lanes, nodes, edges };
}
