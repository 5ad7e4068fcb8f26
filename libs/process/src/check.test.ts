import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkOf } from "./check.ts";
import { parseProcess } from "./parse.ts";
import type { AgentStep, TaskStep } from "./types.ts";

/** Reading the `check` key for the runtime (profiles/check.md §2). */

function steps(lines: string[]): (AgentStep | TaskStep)[] {
  const source = `${["---", "name: checked", "description: A checked process.", "steps:", ...lines, "  - id: done", "    finish: done", "---"].join("\n")}\n`;
  const result = parseProcess(source);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.process.steps.filter(
    (s): s is AgentStep | TaskStep => s.kind === "agent" || s.kind === "task",
  );
}

describe("checkOf (check.md §2)", () => {
  it("a step without check has none", () => {
    const [step] = steps(["  - id: a", "    agent: Do it."]);
    expect(checkOf(step as AgentStep)).toBeNull();
  });

  it("the short form is one yes/no question with the server's default thresholds", () => {
    const [step] = steps(["  - id: a", "    agent: Do it.", "    check: The report covers both lists."]);
    expect(checkOf(step as AgentStep)).toEqual({
      questions: [{ kind: "yes_no", ask: "The report covers both lists.", pass: null, fail: null }],
      advisory: false,
    });
  });

  it("advisory: true beside check; a task step's check reads the same", () => {
    const [step] = steps([
      "  - id: t",
      "    person: reviewer",
      "    task: Review it.",
      "    check:",
      "      - ask: Is it complete?",
      "        pass: 0.7",
      "    advisory: true",
    ]);
    expect(checkOf(step as TaskStep)).toEqual({
      questions: [{ kind: "yes_no", ask: "Is it complete?", pass: 0.7, fail: null }],
      advisory: true,
    });
  });

  it("the vendor-check fixture's three kinds: yes/no with pass and fail, a choice with pass and unsure, a rubric with pass and confidence", () => {
    const source = readFileSync(
      new URL("../../../conformance/fixtures/vendor-check/PROCESS.md", import.meta.url),
      "utf8",
    );
    const result = parseProcess(source);
    if (!result.ok) throw new Error("vendor-check does not parse");
    const step = result.process.steps[0] as AgentStep;
    expect(checkOf(step)).toEqual({
      advisory: false,
      questions: [
        {
          kind: "yes_no",
          ask: "The cleared verdict matches what the attached report says.",
          pass: 0.9,
          fail: 0.5,
        },
        {
          kind: "choice",
          ask: "What does the summary do?",
          options: {
            states: "States the verdict and the lists checked.",
            hedges: "Avoids a verdict or qualifies it heavily.",
            unclear: "Cannot tell.",
          },
          pass: ["states"],
          unsure: ["unclear"],
          confidence: null,
        },
        {
          kind: "rubric",
          ask: "How complete is the screening?",
          levels: [
            "Neither list is clearly covered.",
            "One list is covered.",
            "Both lists are covered with the search terms stated.",
          ],
          pass: 2,
          confidence: 0.8,
        },
      ],
    });
  });

  it("reads a stored definition (plain JSON, as the registry keeps it) the same as a parsed one", () => {
    const [step] = steps([
      "  - id: a",
      "    agent: Do it.",
      "    check:",
      "      - ask: Which?",
      "        one_of: { x: X, y: Y }",
      "        pass: [x]",
    ]);
    const stored = JSON.parse(JSON.stringify(step)) as AgentStep;
    expect(checkOf(stored)).toEqual(checkOf(step as AgentStep));
  });
});
