import { readFileSync } from "node:fs";
import { type Process, parseProcess } from "@baton/process";
import { describe, expect, it } from "vitest";
import { humanize, processMap } from "./model.ts";

const root = new URL("../../../../", import.meta.url);
function load(path: string): Process {
  const parsed = parseProcess(readFileSync(new URL(path, root), "utf8"));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.process;
}
const edges = (p: Process) =>
  processMap(p).edges.map((e) => `${e.from} -${e.kind}-> ${e.to}${e.label ? ` [${e.label}]` : ""}`);

describe("processMap (authoring/process-maps.md, issue #16)", () => {
  it("supplier-onboarding: Agent then the approver's lane, a decision point with when labels, Approved forward, a Rejected line back, two ends", () => {
    const map = processMap(load("fixtures/supplier-onboarding/PROCESS.md"));
    expect(map.lanes).toEqual([
      { id: "agent", label: "Agent" },
      { id: "person:finance-approver", label: "Finance approver" },
    ]);
    expect(edges(load("fixtures/supplier-onboarding/PROCESS.md"))).toEqual([
      "start -flow-> check_vendor",
      "check_vendor -flow-> check_vendor.decision",
      "check_vendor.decision -route-> approve [Vendor is cleared on both lists]",
      "check_vendor.decision -route-> decline [Any sanctions hit]",
      "approve -approved-> done [Approved]",
      "approve -rejected-> check_vendor [Rejected]",
    ]);
    const byId = new Map(map.nodes.map((n) => [n.id, n]));
    expect(byId.get("start")).toMatchObject({ kind: "start", lane: "agent" });
    expect(byId.get("check_vendor.decision")).toMatchObject({ kind: "decision", lane: "agent" });
    // Finishes sit in the lane of the step before them.
    expect(byId.get("decline")).toMatchObject({ kind: "end", label: "declined", lane: "agent" });
    expect(byId.get("done")).toMatchObject({
      kind: "end",
      label: "onboarded",
      lane: "person:finance-approver",
    });
    expect(byId.get("check_vendor")?.badges).toEqual(["Output: cleared, summary", "Evidence: file"]);
    expect(byId.get("approve")?.badges).toEqual(["Due 2d"]);
  });

  it("a person path is a lane of its own; a default next is the following step", () => {
    const map = processMap(load("fixtures/expense-approval/PROCESS.md"));
    expect(map.lanes.map((l) => l.label)).toEqual(["Agent", "Manager", "Person in inputs.employee"]);
    expect(edges(load("fixtures/expense-approval/PROCESS.md"))).toContain(
      "return_to_employee -flow-> returned",
    );
  });

  it("an approval without on_reject says the run ends rejected; the parallel profile forks to each branch and joins before next", () => {
    const map = processMap(load("conformance/fixtures/major-incident/PROCESS.md"));
    expect(edges(load("conformance/fixtures/major-incident/PROCESS.md"))).toEqual([
      "start -flow-> activate",
      "activate -flow-> respond",
      "respond -branch-> operations",
      "respond -branch-> security",
      "respond -branch-> communications",
      "respond.join -flow-> close_review",
      "operations -flow-> respond.join",
      "security -flow-> respond.join",
      "communications -flow-> respond.join",
      "close_review -approved-> done [Approved]",
      "close_review -rejected-> respond [Rejected]",
    ]);
    const byId = new Map(map.nodes.map((n) => [n.id, n]));
    expect(byId.get("respond")).toMatchObject({ kind: "fork", lane: "agent" });
    expect(byId.get("respond.join")).toMatchObject({ kind: "join" });
    expect(map.lanes.map((l) => l.label)).toEqual([
      "Agent",
      "Operations lead",
      "Security lead",
      "Communications lead",
      "Person in inputs.commander",
    ]);
    const ends = load("fixtures/supplier-onboarding/PROCESS.md");
    const noReject = {
      ...ends,
      steps: ends.steps.map((s) => (s.kind === "approve" ? { ...s, onReject: null } : s)),
    };
    expect(processMap(noReject).nodes.find((n) => n.id === "approve")?.badges).toContain(
      "Rejected: the run ends rejected",
    );
  });

  it("a wait_for with on_timeout has a Timed out line; a process of waits alone has a Server lane", () => {
    const source = `---
name: waits
description: Waits only.
steps:
  - id: hold
    wait: 1h
  - id: signal
    wait_for: paid
    timeout: 2d
    on_timeout: late
    next: done
  - id: late
    finish: late
  - id: done
    finish: paid
---
`;
    const parsed = parseProcess(source);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const map = processMap(parsed.process);
    expect(map.lanes).toEqual([{ id: "server", label: "Server" }]);
    expect(edges(parsed.process)).toEqual([
      "start -flow-> hold",
      "hold -flow-> signal",
      "signal -flow-> done",
      "signal -timeout-> late [Timed out]",
    ]);
  });

  it("reads step ids as words", () => {
    expect(humanize("check_vendor")).toBe("Check vendor");
    expect(humanize("return-to_employee")).toBe("Return to employee");
  });
});
