/**
 * The rule tables of the two profiles' keys: `parallel:` (profiles/parallel.md §1–§2) and `check`
 * with `advisory` (profiles/check.md §2). Lines given to `doc` start at file line 4.
 */

import { describe, expect, it } from "vitest";
import { parseProcess } from "./parse.ts";
import { branchMembership, stepNext } from "./steps.ts";
import { doc, FINISH_ONLY, issuesOf, processOf } from "./test-support.ts";

const CYCLE_RULE = "following next and on_timeout no step may be visited twice; only on_reject goes back";

describe("parallel.md §1–§2", () => {
  const base = [
    "inputs:", // 4
    "  commander: person", // 5
    "steps:", // 6
    "  - id: activate", // 7
    "    agent: Open the bridge.", // 8
    "  - id: respond", // 9
    "    parallel: [ops, sec]", // 10
    "    next: review", // 11
    "  - id: ops", // 12
    "    task: Restore service.", // 13
    "    person: ops-lead", // 14
    "    next: join", // 15
    "  - id: sec", // 16
    "    task: Contain.", // 17
    "    person: sec-lead", // 18
    "    next: join", // 19
    "  - id: review", // 20
    "    approve: Confirm.", // 21
    "    person: inputs.commander", // 22
    "    on_reject: respond", // 23
    "  - id: done", // 24
    "    finish: stabilized", // 25
  ];
  const replace = (line: number, text: string) => base.map((l, i) => (i + 4 === line ? text : l));
  const insertAfter = (line: number, ...texts: string[]) => [
    ...base.slice(0, line - 3),
    ...texts,
    ...base.slice(line - 3),
  ];

  it("parallel.md §1 a fork with two joining branches, rework to the parallel step, is accepted", () => {
    const p = processOf(doc(base));
    expect(p.profiles).toEqual(["parallel-1"]);
    expect(p.steps[1]).toEqual({
      id: "respond",
      line: 9,
      kind: "parallel",
      branches: ["ops", "sec"],
      next: "review",
    });
    expect(stepNext(p, "ops")).toBe("join");
    expect(stepNext(p, "activate")).toBe("respond");
    expect(stepNext(p, "review")).toBe("done");
  });

  it.each([
    [
      10,
      "    parallel: [ops]",
      "10:15 steps[1].parallel: must be a list of two or more step ids (the branch entries)",
    ],
    [
      10,
      "    parallel: ops",
      "10:15 steps[1].parallel: must be a list of two or more step ids (the branch entries)",
    ],
    [10, "    parallel: [ops, secc]", '10:21 steps[1].parallel[1]: unknown step "secc"'],
    [10, "    parallel: [ops, 5]", "10:21 steps[1].parallel[1]: expected a step id"],
    [10, "    parallel: [ops, ops]", '10:21 steps[1].parallel[1]: "ops" is listed twice'],
    [
      10,
      "    parallel: [ops, done]",
      '10:21 steps[1].parallel[1]: "done" is a finish; a branch cannot contain one',
    ],
    [
      10,
      "    parallel: [ops, respond]",
      "10:21 steps[1].parallel[1]: a parallel step cannot be its own branch",
    ],
    [
      10,
      "    parallel: [ops, review]",
      '10:21 steps[1].parallel[1]: "review" is where the parallel step continues after the join; it cannot be a branch',
    ],
    [
      10,
      "    parallel: [activate, ops]",
      '10:16 steps[1].parallel[0]: "activate" is the first step, which starts the run; it cannot start a branch',
    ],
    [24, "  - id: join", '24:9 steps[5].id: "join" is reserved when the process has a parallel step'],
    [
      15,
      "    due: 1h",
      "12:5 steps[2]: a step in a branch must name next (a step of its branch, or join); the following-step default does not apply inside a branch",
    ],
    [
      15,
      "    next: done",
      '15:11 steps[2].next: a branch step cannot route to a finish ("done"); end the branch with join',
    ],
    [
      15,
      "    next: respond",
      '15:11 steps[2].next: a branch step cannot route to its parallel step "respond"; end the branch with join',
    ],
    [
      15,
      "    next: review",
      '15:11 steps[2].next: "review" is outside this branch; a branch step routes only to steps of its branch or join',
    ],
    [
      15,
      "    next: activate",
      '15:11 steps[2].next: "activate" is outside this branch; a branch step routes only to steps of its branch or join',
    ],
    [
      15,
      "    next: sec",
      '15:11 steps[2].next: "sec" starts another branch of "respond"; a step belongs to one branch, so end this one with join',
    ],
    [
      23,
      "    on_reject: ops",
      '23:16 steps[4].on_reject: "ops" is inside a branch of "respond"; from outside a branch, on_reject may target the parallel step or a step before it, not a branch step',
    ],
    [
      23,
      "    on_reject: join",
      '23:16 steps[4].on_reject: unknown step "join"; join is allowed only for next and on_timeout inside a branch',
    ],
  ])("parallel.md §2 line %i %j is refused", (line, text, issue) => {
    expect(issuesOf(doc(replace(line, text)))).toEqual([issue]);
  });

  it("parallel.md §2 on_reject after the parallel step may target a step before it", () => {
    expect(issuesOf(doc(replace(23, "    on_reject: activate")))).toEqual([]);
  });

  it("parallel.md §1 the parallel step takes next and nothing else", () => {
    expect(issuesOf(doc(insertAfter(11, "    due: 1h")))).toEqual([
      "12:5 steps[1].due: not allowed on parallel steps; allowed: id, parallel, next",
    ]);
  });

  it("parallel.md §2 join is allowed only inside a branch", () => {
    expect(issuesOf(doc(replace(23, "    next: join")))).toEqual([
      "23:11 steps[4].next: join is allowed only inside a parallel branch",
      '24:5 steps[5]: step "done" cannot be reached from the first step',
    ]);
  });

  it("parallel.md §2 on_timeout: join is allowed only inside a branch", () => {
    const lines = insertAfter(
      8,
      "  - id: wait_bridge",
      "    wait_for: bridge-open",
      "    timeout: 1h",
      "    on_timeout: join",
    );
    expect(issuesOf(doc(lines))).toEqual([
      "12:17 steps[1].on_timeout: join is allowed only inside a parallel branch",
    ]);
  });

  it("parallel.md §2 on_reject after the join may also target a later step outside the branches (core rule)", () => {
    const lines = [
      ...base.slice(0, 16),
      "  - id: summary", // 20
      "    agent: Summarize.", // 21
      ...base.slice(16),
    ].map((l, i) => (i + 4 === 25 ? "    on_reject: summary" : i + 4 === 11 ? "    next: summary" : l));
    expect(issuesOf(doc(lines))).toEqual([]);
  });

  it("parallel.md §2 no step outside the branches routes into one", () => {
    expect(issuesOf(doc(insertAfter(8, "    next: [respond, sec]")))).toEqual([
      '9:21 steps[0].next[1]: "sec" is inside a branch of "respond"; only the parallel step starts a branch',
    ]);
  });

  it("parallel.md §2 the following-step default of the parallel step cannot enter a branch", () => {
    expect(issuesOf(doc(replace(11, "    # continues by default")))).toEqual([
      '9:5 steps[1]: its default next, the following step "ops", is inside a branch of "respond"; name next',
      '20:5 steps[4]: step "review" cannot be reached from the first step',
      '24:5 steps[5]: step "done" cannot be reached from the first step',
    ]);
  });

  it("parallel.md §2 on_reject inside a branch targets a step of the same branch", () => {
    const lines = insertAfter(15, "    on_reject: activate").map((l, i) =>
      i + 4 === 13 ? "    approve: Restored?" : l,
    );
    expect(issuesOf(doc(lines))).toEqual([
      '16:16 steps[2].on_reject: "activate" is outside this branch; on_reject inside a branch targets a step of the same branch',
    ]);
  });

  it("parallel.md §2 branches cannot nest (a parallel entry, or a route to a parallel step)", () => {
    const nested = (aNext: string) => [
      "steps:",
      "  - id: start", // 5
      "    agent: Start.",
      "  - id: outer", // 7
      "    parallel: [a, d]", // 8
      "    next: done",
      "  - id: a", // 10
      "    agent: A.",
      `    next: ${aNext}`, // 12
      "  - id: inner", // 13
      "    parallel: [b, c]",
      "    next: join",
      "  - id: b",
      "    agent: B.",
      "    next: join",
      "  - id: c",
      "    agent: C.",
      "    next: join",
      "  - id: d",
      "    agent: D.",
      "    next: join",
      "  - id: done",
      "    finish: ok",
    ];
    expect(issuesOf(doc(nested("inner")))).toEqual([
      '12:11 steps[2].next: "inner" is a parallel step; branches cannot nest in parallel-1',
    ]);
    const entry = nested("join").map((l) => (l === "    parallel: [a, d]" ? "    parallel: [a, inner]" : l));
    expect(issuesOf(doc(entry))).toEqual([
      '8:19 steps[1].parallel[1]: "inner" is a parallel step; branches cannot nest in parallel-1',
    ]);
  });

  it("parallel.md §2 join and parallel edges are not cycles; a cycle inside a branch is", () => {
    const lines = replace(15, "    next: ops");
    expect(issuesOf(doc(lines))).toEqual([`15:11 steps[2].next: creates a cycle (ops → ops); ${CYCLE_RULE}`]);
  });

  it("parallel.md §2 a step named join is fine without the profile", () => {
    expect(
      issuesOf(
        doc(["steps:", "  - id: a", "    agent: A.", "    next: join", "  - id: join", "    finish: ok"]),
      ),
    ).toEqual([]);
  });

  it("parallel.md §2 branches of several steps, approvals with on_reject and waits with on_timeout: join", () => {
    const lines = [
      "steps:",
      "  - id: start",
      "    agent: Start.",
      "  - id: fork",
      "    parallel: [ops_fix, comms]",
      "    next: review",
      "  - id: ops_fix",
      "    agent: Fix.",
      "    next: ops_check",
      "  - id: ops_check",
      "    approve: Check.",
      "    person: ops-lead",
      "    on_reject: ops_fix",
      "    next: join",
      "  - id: comms",
      "    wait_for: notice-sent",
      "    timeout: 1h",
      "    on_timeout: comms_chase",
      "    next: join",
      "  - id: comms_chase",
      "    task: Chase.",
      "    person: comms-lead",
      "    next: [join, ops_help]",
      "  - id: ops_help",
      "    wait: 5m",
      "    next: join",
      "  - id: review",
      "    approve: Ok?",
      "    person: commander",
      "    on_reject: fork",
      "  - id: done",
      "    finish: ok",
    ];
    expect(issuesOf(doc(lines))).toEqual([]);
    const p = processOf(doc(lines));
    expect(p.profiles).toEqual(["parallel-1"]);
    expect(p.tools).toEqual(["send_event"]);
    expect(p.roles).toEqual(["ops-lead", "comms-lead", "commander"]);
    expect(Object.fromEntries(branchMembership(p))).toEqual({
      ops_fix: { parallel: "fork", entry: "ops_fix" },
      ops_check: { parallel: "fork", entry: "ops_fix" },
      comms: { parallel: "fork", entry: "comms" },
      comms_chase: { parallel: "fork", entry: "comms" },
      ops_help: { parallel: "fork", entry: "comms" },
    });
    expect(stepNext(p, "comms_chase")).toEqual([{ to: "join" }, { to: "ops_help" }]);
  });

  /** A fork after two steps; `x` and `y` are its branches and `review` follows the join. */
  const backRoute = (xNext: string) => [
    "steps:", // 4
    "  - id: start", // 5
    "    agent: go",
    "  - id: prep", // 7
    "    agent: prep",
    "  - id: fork", // 9
    "    parallel: [x, y]",
    "    next: review",
    "  - id: x", // 12
    "    agent: x work",
    `    next: ${xNext}`, // 14
    "  - id: y", // 15
    "    agent: y",
    "    next: join",
    "  - id: review", // 18
    "    approve: fine?",
    "    person: boss",
    "    next: done",
    "  - id: done", // 22
    "    finish: ok",
  ];

  it.each([
    ["prep", "a step before the fork"],
    ["start", "the first step"],
    ["review", "the step after the join"],
  ])(
    "parallel.md §2 a branch step never routes outside its branch: reported at the edge, without a cascade (next: %s, %s)",
    (target) => {
      expect(issuesOf(doc(backRoute(target)))).toEqual([
        `14:11 steps[3].next: "${target}" is outside this branch; a branch step routes only to steps of its branch or join`,
      ]);
    },
  );

  it("parallel.md §2 a route out of a branch is reported once, not again at the steps before it", () => {
    const lines = backRoute("x2").flatMap((l) =>
      l === "  - id: y" ? ["  - id: x2", "    agent: more x work", "    next: [prep, join]", l] : [l],
    );
    expect(issuesOf(doc(lines))).toEqual([
      '17:12 steps[4].next[0]: "prep" is outside this branch; a branch step routes only to steps of its branch or join',
    ]);
  });

  it('parallel.md §2 a mistake at the end of a branch is not repeated as "never reaches join" before it', () => {
    const lines = backRoute("x2").flatMap((l) =>
      l === "  - id: y" ? ["  - id: x2", "    agent: more x work", "    next: done", l] : [l],
    );
    expect(issuesOf(doc(lines))).toEqual([
      '17:11 steps[4].next: a branch step cannot route to a finish ("done"); end the branch with join',
    ]);
  });

  it("parallel.md §2 no step is in two branches: reported at the edge that leads into the other branch", () => {
    const lines = [
      "steps:", // 4
      "  - id: start",
      "    agent: go",
      "  - id: fork", // 7
      "    parallel: [a, b]",
      "    next: done",
      "  - id: a", // 10
      "    agent: a",
      "    next: a2",
      "  - id: a2", // 13
      "    agent: a2",
      "    next: join",
      "  - id: b", // 16
      "    agent: b",
      "    next: a2", // 18
      "  - id: done",
      "    finish: ok",
    ];
    expect(issuesOf(doc(lines))).toEqual([
      '18:11 steps[4].next: "a2" is in another branch ("a" of "fork"); a step belongs to one branch, so end this one with join',
    ]);
  });

  it("parallel.md §2 no step is in two branches: an entry listed by a second parallel step is reported there", () => {
    const lines = [
      "steps:", // 4
      "  - id: start",
      "    agent: go",
      "  - id: fork", // 7
      "    parallel: [a, b]",
      "    next: fork2",
      "  - id: a", // 10
      "    agent: a",
      "    next: join",
      "  - id: b", // 13
      "    agent: b",
      "    next: join",
      "  - id: fork2", // 16
      "    parallel: [a, c]", // 17
      "    next: done",
      "  - id: c",
      "    agent: c",
      "    next: join",
      "  - id: done",
      "    finish: ok",
    ];
    expect(issuesOf(doc(lines))).toEqual([
      '17:16 steps[4].parallel[0]: "a" is already a branch of "fork"; a step belongs to one branch',
    ]);
  });

  it("parallel.md §2 the parallel step's own next names a step after the join, not one of its branch steps", () => {
    const lines = backRoute("x2")
      .flatMap((l) =>
        l === "  - id: y" ? ["  - id: x2", "    agent: more x work", "    next: join", l] : [l],
      )
      .map((l) => (l === "    next: review" ? "    next: x2" : l));
    expect(issuesOf(doc(lines))).toEqual([
      '11:11 steps[2].next: "x2" is a step of this parallel step\'s branch "x"; next names where the run continues after every branch has joined, a step outside the branches',
      '21:5 steps[6]: step "review" cannot be reached from the first step',
      '25:5 steps[7]: step "done" cannot be reached from the first step',
    ]);
  });
});

describe("check.md §2", () => {
  /** An agent step whose check lines start at line 7. */
  const withCheck = (...lines: string[]) => [
    "steps:",
    "  - id: a",
    "    agent: Screen it.",
    ...lines,
    "  - id: done",
    "    finish: ok",
  ];
  const FORM = "must be a question (text) or a list of questions";
  const ALLOWED = "ask, pass, fail, one_of, unsure, levels, confidence";

  it("check.md §2 the short form and the full form of the spec's example are accepted", () => {
    const short = processOf(doc(withCheck("    check: The verdict matches the report.")));
    expect(short.profiles).toEqual(["check-1"]);
    expect(short.steps[0]).toMatchObject({ check: "The verdict matches the report.", advisory: null });
    const full = withCheck(
      "    check:",
      "      - ask: The cleared verdict matches what the attached report says.",
      "        pass: 0.9",
      "        fail: 0.5",
      "      - ask: What does the summary do?",
      "        one_of:",
      "          states: States the verdict and the lists checked.",
      "          hedges: Avoids a verdict or qualifies it heavily.",
      "          unclear: Cannot tell.",
      "        pass: [states]",
      "        unsure: [unclear]",
      "        confidence: 0.7",
      "      - ask: How complete is the screening?",
      "        levels:",
      "          - Neither list is clearly covered.",
      "          - One list is covered.",
      "          - Both lists are covered with the search terms stated.",
      "        pass: 2",
      "        confidence: 0.8",
      "    advisory: true",
    );
    expect(issuesOf(doc(full))).toEqual([]);
    expect(processOf(doc(full)).steps[0]).toMatchObject({ advisory: true });
  });

  it("check.md §2 check on a task step is accepted", () => {
    const lines = [
      "steps:",
      "  - id: a",
      "    task: Do it.",
      "    person: clerk",
      "    check: Is it done?",
      ...FINISH_ONLY.slice(1),
    ];
    expect(issuesOf(doc(lines))).toEqual([]);
  });

  it.each([
    [["    check: ''"], `7:12 steps[0].check: ${FORM}`],
    [["    check: 5"], `7:12 steps[0].check: ${FORM}`],
    [["    check: { ask: Q? }"], `7:12 steps[0].check: ${FORM}`],
    [["    check: []"], "7:12 steps[0].check: a list needs at least one question"],
    [["    check: [Is it right?]"], "7:13 steps[0].check[0]: expected a question with ask"],
    [
      ["    check:", "      - pass: 0.9"],
      "8:9 steps[0].check[0].ask: required; the question, in plain language",
    ],
    [["    check:", '      - ask: ""'], "8:14 steps[0].check[0].ask: must be non-empty text"],
    [
      ["    check:", "      - ask: Q?", "        weight: 2"],
      `9:9 steps[0].check[0].weight: unknown field; allowed: ${ALLOWED}`,
    ],
    [
      [
        "    check:",
        "      - ask: Q?",
        "        one_of: { a: A, b: B }",
        "        levels: [x, y]",
        "        pass: [a]",
      ],
      "8:9 steps[0].check[0]: use one_of (a choice) or levels (a rubric), not both",
    ],
    [
      [
        "    check:",
        "      - ask: Q?",
        "        one_of: { a: A, b: B }",
        "        levels: [x, y]",
        "        pass: 1",
      ],
      "8:9 steps[0].check[0]: use one_of (a choice) or levels (a rubric), not both",
    ],
    // yes/no
    [
      ["    check:", "      - ask: Q?", "        pass: 1.5"],
      "9:15 steps[0].check[0].pass: must be a number from 0 to 1",
    ],
    [
      ["    check:", "      - ask: Q?", "        pass: high"],
      "9:15 steps[0].check[0].pass: must be a number from 0 to 1",
    ],
    [
      ["    check:", "      - ask: Q?", "        fail: -0.1"],
      "9:15 steps[0].check[0].fail: must be a number from 0 to 1",
    ],
    [
      ["    check:", "      - ask: Q?", "        pass: 0.5", "        fail: 0.7"],
      "10:15 steps[0].check[0].fail: must be below pass (0.5)",
    ],
    [
      ["    check:", "      - ask: Q?", "        pass: 0.5", "        fail: 0.5"],
      "10:15 steps[0].check[0].fail: must be below pass (0.5)",
    ],
    [
      ["    check:", "      - ask: Q?", "        confidence: 0.8"],
      "9:9 steps[0].check[0].confidence: allowed only on choice and rubric questions; a yes/no answer is already a probability",
    ],
    [
      ["    check:", "      - ask: Q?", "        unsure: [a]"],
      "9:9 steps[0].check[0].unsure: allowed only on a choice (one_of) question",
    ],
    // choice
    [
      ["    check:", "      - ask: Q?", "        one_of: { a: A }", "        pass: [a]"],
      "9:17 steps[0].check[0].one_of: must map two or more answer names to descriptions",
    ],
    [
      ["    check:", "      - ask: Q?", "        one_of: [a, b]", "        pass: [a]"],
      "9:17 steps[0].check[0].one_of: must map two or more answer names to descriptions",
    ],
    [
      ["    check:", "      - ask: Q?", "        one_of: { a: A, b: 2 }", "        pass: [a]"],
      "9:28 steps[0].check[0].one_of.b: must be a description (non-empty text)",
    ],
    [
      ["    check:", "      - ask: Q?", "        one_of: { a: A, b: B }"],
      "8:9 steps[0].check[0].pass: required on a choice; list the answer names that pass",
    ],
    [
      ["    check:", "      - ask: Q?", "        one_of: { a: A, b: B }", "        pass: [c]"],
      '10:16 steps[0].check[0].pass[0]: "c" is not an answer in one_of; use a or b',
    ],
    [
      ["    check:", "      - ask: Q?", "        one_of: { a: A, b: B }", "        pass: []"],
      "10:15 steps[0].check[0].pass: must list at least one answer name from one_of",
    ],
    [
      ["    check:", "      - ask: Q?", "        one_of: { a: A, b: B }", "        pass: 0.9"],
      "10:15 steps[0].check[0].pass: must list at least one answer name from one_of",
    ],
    [
      ["    check:", "      - ask: Q?", "        one_of: { a: A, b: B }", "        pass: [a, a]"],
      '10:19 steps[0].check[0].pass[1]: "a" is listed twice',
    ],
    [
      [
        "    check:",
        "      - ask: Q?",
        "        one_of: { a: A, b: B }",
        "        pass: [a]",
        "        unsure: [c]",
      ],
      '11:18 steps[0].check[0].unsure[0]: "c" is not an answer in one_of; use a or b',
    ],
    [
      [
        "    check:",
        "      - ask: Q?",
        "        one_of: { a: A, b: B }",
        "        pass: [a]",
        "        unsure: [a]",
      ],
      '11:18 steps[0].check[0].unsure[0]: "a" is also in pass; an answer passes or is unsure, not both',
    ],
    [
      [
        "    check:",
        "      - ask: Q?",
        "        one_of: { a: A, b: B }",
        "        pass: [a]",
        "        fail: 0.2",
      ],
      "11:9 steps[0].check[0].fail: allowed only on a yes/no question (a choice fails on any answer not in pass or unsure)",
    ],
    [
      [
        "    check:",
        "      - ask: Q?",
        "        one_of: { a: A, b: B }",
        "        pass: [a]",
        "        confidence: 2",
      ],
      "11:21 steps[0].check[0].confidence: must be a number from 0 to 1",
    ],
    // rubric
    [
      ["    check:", "      - ask: Q?", "        levels: [only]", "        pass: 0"],
      "9:17 steps[0].check[0].levels: must be a list of 2–10 level descriptions, worst first",
    ],
    [
      [
        "    check:",
        "      - ask: Q?",
        "        levels: [a, b, c, d, e, f, g, h, i, j, k]",
        "        pass: 0",
      ],
      "9:17 steps[0].check[0].levels: must be a list of 2–10 level descriptions, worst first",
    ],
    [
      ["    check:", "      - ask: Q?", "        levels: [low, 5]", "        pass: 0"],
      "9:23 steps[0].check[0].levels[1]: must be a level description (non-empty text)",
    ],
    [
      ["    check:", "      - ask: Q?", "        levels: [low, high]", "        pass: 2"],
      "10:15 steps[0].check[0].pass: must be a level number from 0 to 1",
    ],
    [
      ["    check:", "      - ask: Q?", "        levels: [low, high]", "        pass: 0.5"],
      "10:15 steps[0].check[0].pass: must be a level number from 0 to 1",
    ],
    [
      ["    check:", "      - ask: Q?", "        levels: [low, high]"],
      "8:9 steps[0].check[0].pass: required on a rubric; the 0-based level at or above which the answer passes",
    ],
    [
      [
        "    check:",
        "      - ask: Q?",
        "        levels: [low, high]",
        "        pass: 1",
        "        unsure: [low]",
      ],
      "11:9 steps[0].check[0].unsure: allowed only on a choice (one_of) question",
    ],
    [
      [
        "    check:",
        "      - ask: Q?",
        "        levels: [low, high]",
        "        pass: 1",
        "        fail: 0.1",
      ],
      "11:9 steps[0].check[0].fail: allowed only on a yes/no question",
    ],
    // advisory
    [["    advisory: true"], "7:5 steps[0].advisory: allowed only beside check"],
    [["    check: Q?", "    advisory: yes"], "8:15 steps[0].advisory: expected true or false"],
  ])("check.md §2 %j is refused", (lines, issue) => {
    expect(issuesOf(doc(withCheck(...lines)))).toEqual([issue]);
  });

  it("check.md §2 a question with both one_of and levels still reports every other issue", () => {
    const lines = withCheck(
      "    check:",
      "      - ask: Q?", // 8
      "        one_of: { a: A }", // 9
      "        levels: [only]", // 10
      "        unsure: [b]", // 11
      "        fail: 0.2", // 12
    );
    expect(issuesOf(doc(lines))).toEqual([
      "8:9 steps[0].check[0]: use one_of (a choice) or levels (a rubric), not both",
      "8:9 steps[0].check[0].pass: required; the answer names that pass (a choice) or the 0-based level at or above which the answer passes (a rubric)",
      "9:17 steps[0].check[0].one_of: must map two or more answer names to descriptions",
      "10:17 steps[0].check[0].levels: must be a list of 2–10 level descriptions, worst first",
      "12:9 steps[0].check[0].fail: allowed only on a yes/no question",
    ]);
    const withPass = (pass: string) =>
      withCheck(
        "    check:",
        "      - ask: Q?",
        "        one_of: { a: A, b: B }",
        "        levels: [x, y]",
        `        pass: ${pass}`, // 11
      );
    expect(issuesOf(doc(withPass("[c]")))).toEqual([
      "8:9 steps[0].check[0]: use one_of (a choice) or levels (a rubric), not both",
      '11:16 steps[0].check[0].pass[0]: "c" is not an answer in one_of; use a or b',
    ]);
    expect(issuesOf(doc(withPass("2")))).toEqual([
      "8:9 steps[0].check[0]: use one_of (a choice) or levels (a rubric), not both",
      "11:15 steps[0].check[0].pass: must be a level number from 0 to 1",
    ]);
  });

  it("check.md §2 a choice with many answers: each wrong name is reported, naming the first ten answers", () => {
    const answers = Array.from({ length: 5000 }, (_, i) => `a${i}`);
    const wrong = Array.from({ length: 300 }, (_, i) => `w${i}`);
    const lines = withCheck(
      "    check:",
      "      - ask: Q?",
      `        one_of: { ${answers.map((a) => `${a}: A`).join(", ")} }`,
      `        pass: [${[...answers, ...wrong].join(", ")}]`, // 10
      `        unsure: [${answers.join(", ")}]`, // 11
    );
    const result = parseProcess(doc(lines));
    expect(result.ok).toBe(false);
    const issues = result.ok ? [] : result.issues;
    // 300 wrong names and 5,000 answers both in pass and unsure: capped at 200 and one more.
    expect(issues).toHaveLength(201);
    expect(issues[0]?.message).toBe(
      'steps[0].check[0].pass[5000]: "w0" is not an answer in one_of; use a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, … (5,000 answers)',
    );
    expect(issues[200]?.message).toBe("frontmatter: … and 5,100 more issues from here on; fix these first");
  });

  it("check.md §2 rubric levels 2 and 10 and yes/no bounds 0 and 1 are accepted", () => {
    const lines = withCheck(
      "    check:",
      "      - ask: Two levels?",
      "        levels: [low, high]",
      "        pass: 0",
      "      - ask: Ten levels?",
      "        levels: [a, b, c, d, e, f, g, h, i, j]",
      "        pass: 9",
      "      - ask: Bounds?",
      "        pass: 1",
      "        fail: 0",
      "      - ask: Only fail?",
      "        fail: 0.3",
      "    advisory: false",
    );
    expect(issuesOf(doc(lines))).toEqual([]);
  });
});
