import { parseProcess } from "@baton/process";
import ELK from "elkjs/lib/elk.bundled.js";
import type { ELK as Elk } from "elkjs/lib/elk-api.js";
import { describe, expect, it } from "vitest";
import { generateProcess } from "../../../../test/support/generated-process.ts";
import { layoutMap, wrap } from "./layout.ts";
import { processMap } from "./model.ts";

const elk = new (ELK as unknown as new () => Elk)();

describe("layoutMap (issue #16: laid out by ELK, lanes per performer)", () => {
  it("places every node inside its lane's band, bands in order without overlap, and routes every line", async () => {
    for (let seed = 1; seed <= 15; seed++) {
      const generated = generateProcess("gen-map", seed);
      const parsed = parseProcess(generated.source);
      if (!parsed.ok) throw new Error(`seed ${seed}: ${JSON.stringify(parsed.issues)}`);
      const map = processMap(parsed.process);
      const layout = await layoutMap(map, elk);
      expect(layout.nodes.map((n) => n.id).sort(), `seed ${seed}`).toEqual(map.nodes.map((n) => n.id).sort());
      expect(layout.lanes.map((l) => l.id)).toEqual(map.lanes.map((l) => l.id));
      for (let i = 1; i < layout.lanes.length; i++) {
        const prev = layout.lanes[i - 1]!;
        expect(layout.lanes[i]!.y, `seed ${seed}`).toBeGreaterThanOrEqual(prev.y + prev.height - 0.001);
      }
      for (const node of layout.nodes) {
        const lane = layout.lanes.find((l) => l.id === node.lane)!;
        expect(node.y, `seed ${seed} ${node.id}`).toBeGreaterThanOrEqual(lane.y);
        expect(node.y + node.height, `seed ${seed} ${node.id}`).toBeLessThanOrEqual(
          lane.y + lane.height + 0.001,
        );
        expect(node.x + node.width).toBeLessThanOrEqual(layout.width);
      }
      for (const edge of layout.edges) {
        expect(edge.points.length, `seed ${seed} ${edge.from}→${edge.to}`).toBeGreaterThanOrEqual(2);
        if (edge.label) expect(edge.labelBox?.lines.join(" ")).toBe(wrap(edge.label).join(" "));
      }
    }
  });

  it("wraps labels on spaces into short lines", () => {
    expect(wrap("The receipt matches the claim and the policy allows it")).toEqual([
      "The receipt matches",
      "the claim and the",
      "policy allows it",
    ]);
    expect(wrap("")).toEqual([]);
  });
});
