// Draws a process map (authoring/process-maps.md) as SVG, with the same map as a list for every reader.
import type { Process } from "@baton/process";
import type { StepState } from "@baton/protocol";
import type { ELK } from "elkjs/lib/elk-api.js";
import { useEffect, useMemo, useState } from "preact/hooks";
import { layoutMap, type MapLayout, type PlacedEdge, type PlacedNode, wrap } from "./layout.ts";
import { processMap } from "./model.ts";

/** Step states of a run, to show where the work is. */
export type RunStates = ReadonlyMap<string, StepState | null>;

const KIND_LABEL: Record<string, string> = {
  agent: "Agent",
  task: "Task",
  approve: "Approval",
  wait: "Wait",
  wait_until: "Wait until",
  wait_for: "Wait for event",
  parallel: "Parallel",
};

let elk: Promise<ELK> | null = null;
/** The layout library, loaded once and only where a map is drawn (it is the console's largest part). */
function loadElk(): Promise<ELK> {
  // elkjs is CommonJS: its module's default export is the constructor.
  elk ??= import("elkjs/lib/elk.bundled.js").then(
    (m) => new (m as unknown as { default: new () => ELK }).default(),
  );
  return elk;
}

function path(points: { x: number; y: number }[]): string {
  return points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
}

function Card({ node, state }: { node: PlacedNode; state: StepState | null | undefined }) {
  const lines = wrap(node.text, 29).slice(0, 2);
  const truncated = wrap(node.text, 29).length > 2;
  const current = state === "ready" || state === "claimed" || state === "waiting";
  const cls = `card-node kind-${node.stepKind}${current ? " current" : ""}${state === "done" ? " done" : ""}${
    state === "failed" ? " failed" : ""
  }`;
  return (
    <g class={cls} transform={`translate(${node.x},${node.y})`} data-step={node.stepId}>
      <rect width={node.width} height={node.height} rx="8" />
      <text x="10" y="18" class="card-kind">
        {KIND_LABEL[node.stepKind ?? ""] ?? node.stepKind}
        {state ? ` · ${state}` : ""}
      </text>
      <text x="10" y="37" class="card-title">
        {node.label}
      </text>
      {lines.map((line, i) => (
        <text x="10" y={56 + i * 14} class="card-text" key={line}>
          {line}
          {truncated && i === lines.length - 1 ? "…" : ""}
        </text>
      ))}
      {node.badges.length > 0 && (
        <text x="10" y={node.height - 8} class="card-badges">
          {node.badges
            .map((b) => b.split(":")[0])
            .join(" · ")
            .slice(0, 40)}
        </text>
      )}
    </g>
  );
}

function MapNodeView({ node, state }: { node: PlacedNode; state: StepState | null | undefined }) {
  const cx = node.x + node.width / 2;
  const cy = node.y + node.height / 2;
  switch (node.kind) {
    case "step":
      return <Card node={node} state={state} />;
    case "decision":
      return (
        <polygon
          class="decision-node"
          points={`${cx},${node.y} ${node.x + node.width},${cy} ${cx},${node.y + node.height} ${node.x},${cy}`}
        />
      );
    case "start":
      return (
        <g class="start-node">
          <circle cx={cx} cy={cy} r={node.width / 2} />
          <text x={cx} y={node.y - 6} text-anchor="middle">
            Start
          </text>
        </g>
      );
    case "end":
      return (
        <g class="end-node" data-step={node.stepId}>
          <circle cx={cx} cy={cy} r={node.width / 2} />
          <circle cx={cx} cy={cy} r={node.width / 2 - 5} class="inner" />
          <text x={cx} y={node.y + node.height + 16} text-anchor="middle">
            End: {node.label}
          </text>
        </g>
      );
    case "fork":
    case "join":
      return <rect class="bar-node" x={node.x} y={node.y} width={node.width} height={node.height} rx="3" />;
  }
}

function Edge({ edge }: { edge: PlacedEdge }) {
  if (edge.points.length < 2) return null;
  return (
    <g class={`edge edge-${edge.kind}`} data-from={edge.from} data-to={edge.to}>
      <path d={path(edge.points)} marker-end="url(#arrow)" />
      {edge.labelBox && (
        <g class="edge-label">
          <rect
            x={edge.labelBox.x}
            y={edge.labelBox.y}
            width={edge.labelBox.width}
            height={edge.labelBox.height}
            rx="3"
          />
          {edge.labelBox.lines.map((line, i) => (
            <text x={edge.labelBox!.x + 4} y={edge.labelBox!.y + 14 + i * 15} key={line}>
              {line}
            </text>
          ))}
        </g>
      )}
    </g>
  );
}

/** A text description of the map, for the SVG's accessible name. */
function describe(layout: MapLayout): string {
  const steps = layout.nodes.filter((n) => n.kind === "step").length;
  const ends = layout.nodes.filter((n) => n.kind === "end").map((n) => n.label);
  return `Process map: ${steps} steps in ${layout.lanes.length} lanes (${layout.lanes
    .map((l) => l.label)
    .join(", ")}), ending ${ends.join(" or ")}. The same map follows as a list.`;
}

/**
 * The map of a published process, laid out by ELK, with lanes per performer, decision points labelled
 * with `when`, dashed rejection lines and End markers with outcomes. With `states`, the steps where the
 * work is now are marked. Below the drawing, the same map as a list (steps, where each goes, and when).
 */
export function ProcessMapView({ process, states }: { process: Process; states?: RunStates }) {
  const map = useMemo(() => processMap(process), [process]);
  const [layout, setLayout] = useState<MapLayout | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    loadElk()
      .then((e) => layoutMap(map, e))
      .then(
        (l) => live && setLayout(l),
        (e: unknown) => live && setError(String(e)),
      );
    return () => {
      live = false;
    };
  }, [map]);
  const byId = new Map(map.nodes.map((n) => [n.id, n]));
  const name = (id: string) => {
    const n = byId.get(id);
    if (!n) return id;
    if (n.kind === "end") return `End: ${n.label}`;
    if (n.kind === "decision") return n.label;
    if (n.kind === "join") return n.label;
    return n.label;
  };
  return (
    <figure class="map">
      {error && <p role="alert">The map could not be drawn: {error}</p>}
      {!layout && !error && <p role="status">Drawing the map…</p>}
      {layout && (
        // Focusable so a keyboard can scroll a map wider than the screen (WCAG 2.1.1).
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus
        <section class="map-scroll" tabIndex={0} aria-label="Process map (scrolls)">
          <svg
            role="img"
            aria-label={describe(layout)}
            width={layout.width}
            height={layout.height}
            viewBox={`0 0 ${layout.width} ${layout.height}`}
            class="map-svg"
          >
            <defs>
              <marker
                id="arrow"
                viewBox="0 0 10 10"
                refX="9"
                refY="5"
                markerWidth="7"
                markerHeight="7"
                orient="auto"
              >
                <path d="M0,0 L10,5 L0,10 z" class="arrow-head" />
              </marker>
            </defs>
            {layout.lanes.map((lane, i) => (
              <g class={`lane lane-${i % 2}`} key={lane.id} data-lane={lane.label}>
                <rect x="0" y={lane.y} width={layout.width} height={lane.height} />
                <text x="12" y={lane.y + 22} class="lane-title">
                  {lane.label}
                </text>
              </g>
            ))}
            {layout.edges.map((e) => (
              <Edge edge={e} key={e.id} />
            ))}
            {layout.nodes.map((n) => (
              <MapNodeView node={n} state={n.stepId ? states?.get(n.stepId) : undefined} key={n.id} />
            ))}
          </svg>
        </section>
      )}
      <figcaption>
        <details>
          <summary>The map as a list</summary>
          <ol class="map-list">
            {map.nodes
              .filter((n) => n.kind === "step" || n.kind === "end" || n.kind === "fork")
              .map((n) => (
                <li key={n.id}>
                  <strong>{n.kind === "end" ? `End: ${n.label}` : n.label}</strong>
                  {n.kind !== "end" && (
                    <span class="muted">
                      {" "}
                      ({KIND_LABEL[n.stepKind ?? ""] ?? n.stepKind},{" "}
                      {map.lanes.find((l) => l.id === n.lane)?.label}
                      {n.stepId && states?.get(n.stepId) ? `, ${states.get(n.stepId)}` : ""})
                    </span>
                  )}
                  {n.kind !== "end" && n.text && <p>{n.text}</p>}
                  <ul>
                    {map.edges
                      .filter((e) => e.from === n.id || (e.from === `${n.id}.decision` && byId.has(e.from)))
                      .filter((e) => e.to !== `${n.id}.decision`)
                      .map((e) => (
                        <li key={e.id}>
                          {e.kind === "rejected"
                            ? "Rejected: back to "
                            : e.kind === "approved"
                              ? "Approved: "
                              : ""}
                          {e.kind === "timeout" ? "Timed out: " : ""}
                          {e.kind === "route" ? `When ${e.label}: ` : ""}
                          {name(e.to)}
                        </li>
                      ))}
                    {n.kind === "fork" &&
                      map.edges
                        .filter((e) => e.from === `${n.id}.join`)
                        .map((e) => <li key={e.id}>When every branch has joined: {name(e.to)}</li>)}
                  </ul>
                </li>
              ))}
          </ol>
        </details>
      </figcaption>
    </figure>
  );
}
