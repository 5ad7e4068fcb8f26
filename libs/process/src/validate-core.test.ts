/**
 * The rule table of the core format (specification §2.1–§2.4, "Implementing a process server"
 * Step 1): for every rule a refused case with its exact issues (message and line:col) and an
 * accepted case. Lines given to `doc` start at file line 4 (lines 1–3: `---`, name, description).
 */

import { describe, expect, it } from "vitest";
import { doc, FINISH_ONLY, issuesOf, processOf, type RuleCase } from "./test-support.ts";

const TYPES = "string, number, boolean, date, datetime, list, object or person";
const KINDS = "agent, task, approve, wait, wait_until, wait_for, finish, parallel";
const NAME_RULE = "^[a-z0-9]+(-[a-z0-9]+)*$ (1–64 characters)";
const DURATION = "not a duration; use an integer followed by m, h or d (30m, 4h, 3d)";
const CYCLE_RULE = "following next and on_timeout no step may be visited twice; only on_reject goes back";
const PERSON_FORMS = "a role name, initiator, or a path like inputs.<field>";

/** A whole file from frontmatter lines starting at line 2 (for rules about name and description). */
const raw = (lines: readonly string[]) => `${["---", ...lines, "---"].join("\n")}\n`;

function table(cases: readonly RuleCase[]) {
  it.each(cases)("$rule", ({ lines, issues }) => {
    expect(issuesOf(doc(lines))).toEqual(issues);
  });
}

describe("§2.1 frontmatter fields", () => {
  it("§2.1 name is required", () => {
    expect(issuesOf(raw(["description: D.", ...FINISH_ONLY]))).toEqual([
      `2:1 name: required; must match ${NAME_RULE}`,
    ]);
  });

  it.each([
    ["Demo", "upper case"],
    ["a--b", "a double hyphen"],
    ["-a", "a leading hyphen"],
    ["a_b", "an underscore"],
    ["a".repeat(65), "65 characters"],
    ["42", "a number"],
  ])("§2.1 name %j is refused (%s)", (name) => {
    expect(issuesOf(raw([`name: ${name}`, "description: D.", ...FINISH_ONLY]))).toEqual([
      `2:7 name: must match ${NAME_RULE}`,
    ]);
  });

  it.each([["a"], ["supplier-onboarding"], ["r2-d2"], ["a".repeat(64)]])(
    "§2.1 name %j is accepted",
    (name) => {
      expect(issuesOf(raw([`name: ${name}`, "description: D.", ...FINISH_ONLY]))).toEqual([]);
    },
  );

  it("§2.1 an importer given a folder refuses a name that differs from it", () => {
    expect(issuesOf(doc(FINISH_ONLY), "demo-2")).toEqual([
      '2:7 name: folder name "demo-2" differs from name "demo"',
    ]);
    expect(issuesOf(doc(FINISH_ONLY), "demo")).toEqual([]);
  });

  it("§2.1 description is required, non-empty text", () => {
    expect(issuesOf(raw(["name: demo", ...FINISH_ONLY]))).toEqual([
      "2:1 description: required; one or two sentences on what the process does and when to start it",
    ]);
    expect(issuesOf(raw(["name: demo", 'description: ""', ...FINISH_ONLY]))).toEqual([
      "3:14 description: must be non-empty text",
    ]);
    expect(issuesOf(raw(["name: demo", 'description: "   "', ...FINISH_ONLY]))).toEqual([
      "3:14 description: must be non-empty text",
    ]);
    expect(issuesOf(raw(["name: demo", "description: 12", ...FINISH_ONLY]))).toEqual([
      "3:14 description: must be non-empty text",
    ]);
  });

  it("§2.1 unknown fields at the top level are refused (x- fields and author versions included)", () => {
    expect(issuesOf(doc(["version: 3", "x-owner: ops", "data_sources: []", ...FINISH_ONLY]))).toEqual([
      "4:1 version: unknown field; allowed: name, description, inputs, requires, steps",
      "5:1 x-owner: unknown field; allowed: name, description, inputs, requires, steps",
      "6:1 data_sources: unknown field; allowed: name, description, inputs, requires, steps",
    ]);
  });

  table([
    {
      rule: "§2.1 steps is required",
      lines: ["inputs: {}"],
      issues: ["2:1 steps: required; a list of at least one step"],
    },
    {
      rule: "§2.1 steps has at least one step",
      lines: ["steps: []"],
      issues: ["4:8 steps: must be a list of at least one step"],
    },
    {
      rule: "§2.1 steps is a list",
      lines: ["steps:", "  done: { finish: ok }"],
      issues: ["5:3 steps: must be a list of at least one step"],
    },
    {
      rule: "§2.1 inputs is a mapping of fields",
      lines: ["inputs: [amount]", ...FINISH_ONLY],
      issues: ["4:9 inputs: expected a mapping of field name to type"],
    },
    { rule: "§2.1 inputs may be empty", lines: ["inputs: {}", ...FINISH_ONLY], issues: [] },
    {
      rule: "§2.1 requires lists systems by name, each once",
      lines: ["requires: { systems: [salesforce, gmail] }", ...FINISH_ONLY],
      issues: [],
    },
    {
      rule: "§2.1 requires is a mapping",
      lines: ["requires: [salesforce]", ...FINISH_ONLY],
      issues: ["4:11 requires: expected a mapping with systems, e.g. { systems: [salesforce] }"],
    },
    {
      rule: "§2.1 requires has only systems",
      lines: ["requires: { systems: [gmail], apis: [stripe] }", ...FINISH_ONLY],
      issues: ["4:31 requires.apis: unknown field; allowed: systems"],
    },
    {
      rule: "§2.1 requires.systems is required",
      lines: ["requires: {}", ...FINISH_ONLY],
      issues: ["4:11 requires.systems: required; a list of system names"],
    },
    {
      rule: "§2.1 requires.systems is a non-empty list",
      lines: ["requires: { systems: [] }", ...FINISH_ONLY],
      issues: ["4:22 requires.systems: must be a non-empty list of system names"],
    },
    {
      rule: "§2.1 requires.systems names match the name pattern",
      lines: ["requires:", "  systems: [gmail, Sales Force]", ...FINISH_ONLY],
      issues: [`5:20 requires.systems[1]: must match ${NAME_RULE}`],
    },
    {
      rule: "§2.1 requires.systems lists each system once",
      lines: ["requires:", "  systems: [gmail, slack, gmail]", ...FINISH_ONLY],
      issues: ['5:27 requires.systems[2]: "gmail" is listed twice; list each system once'],
    },
  ]);

  it("§2.1 requires is returned as written", () => {
    const p = processOf(doc(["requires: { systems: [salesforce, gmail] }", ...FINISH_ONLY]));
    expect(p.requires).toEqual({ systems: ["salesforce", "gmail"] });
    expect(processOf(doc(FINISH_ONLY)).requires).toBeNull();
  });
});

describe("§2.2 steps: ids and kinds", () => {
  table([
    {
      rule: "§2.2 a step is a mapping",
      lines: ["steps:", "  - done", "  - id: end", "    finish: ok"],
      issues: ["5:5 steps[0]: expected a mapping with id and one kind key"],
    },
    {
      rule: "§2.2 a step has an id",
      lines: ["steps:", "  - agent: Do it.", "    next: done", "  - id: done", "    finish: ok"],
      issues: ["5:5 steps[0].id: required; a step id matches ^[a-z][a-z0-9_-]{0,63}$"],
    },
    {
      rule: "§2.2 step ids match the pattern (and a reference to the bad id adds nothing)",
      lines: [
        "steps:",
        "  - id: Check",
        "    agent: Do it.",
        "  - id: review",
        "    approve: Ok?",
        "    person: boss",
        "    on_reject: Check",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ["5:9 steps[0].id: must match ^[a-z][a-z0-9_-]{0,63}$"],
    },
    {
      rule: "§2.2 step ids start with a letter",
      lines: ["steps:", "  - id: 1st", "    finish: ok"],
      issues: ["5:9 steps[0].id: must match ^[a-z][a-z0-9_-]{0,63}$"],
    },
    {
      rule: "§2.2 step ids are at most 64 characters",
      lines: ["steps:", `  - id: a${"b".repeat(64)}`, "    finish: ok"],
      issues: ["5:9 steps[0].id: must match ^[a-z][a-z0-9_-]{0,63}$"],
    },
    {
      rule: "§2.2 a 64-character id with hyphens and underscores is accepted",
      lines: ["steps:", `  - id: a${"_-9".repeat(21)}`, "    finish: ok"],
      issues: [],
    },
    {
      rule: "§2.2 step ids are unique",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: One.",
        "  - id: a",
        "    agent: Two.",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ['7:9 steps[1].id: duplicate step id "a"; steps[0] has it already'],
    },
    {
      rule: "§2.2 a step has a kind key",
      lines: ["steps:", "  - id: a", "    next: done", "  - id: done", "    finish: ok"],
      issues: [`5:5 steps[0]: exactly one kind key is required (${KINDS}); found none`],
    },
    {
      rule: "§2.2 a step has exactly one kind key",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: Do it.",
        "    task: Also.",
        "    person: clerk",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [`5:5 steps[0]: exactly one kind key is required (${KINDS}); found agent, task`],
    },
    {
      rule: "§2.2 unknown step fields are refused",
      lines: ["steps:", "  - id: a", "    agent: Do it.", "    retries: 3", "  - id: done", "    finish: ok"],
      issues: [
        "7:5 steps[0].retries: unknown field; allowed: id, agent, output, evidence, next, due, check, advisory",
      ],
    },
    {
      rule: "§2.2 unknown step fields are refused when the kind is unknown too",
      lines: ["steps:", "  - id: a", "    agnet: Do it.", "  - id: done", "    finish: ok"],
      issues: [
        `5:5 steps[0]: exactly one kind key is required (${KINDS}); found none`,
        "6:5 steps[0].agnet: unknown field; allowed: id, one kind key (agent, task, approve, wait, wait_until, wait_for, finish, parallel), output, evidence, next, person, on_reject, due, timeout, on_timeout, check, advisory",
      ],
    },
  ]);
});

describe("§2.2 optional keys per kind", () => {
  /** A step of the given lines (from line 5), then `done`. */
  const step = (...lines: string[]) => ["steps:", "  - id: a", ...lines, "  - id: done", "    finish: ok"];
  table([
    {
      rule: "§2.2 output is for agent and task, not approve",
      lines: step("    approve: Ok?", "    person: boss", "    output: { x: string }"),
      issues: [
        "8:5 steps[0].output: not allowed on approve steps; allowed: id, approve, person, next, on_reject, due",
      ],
    },
    {
      rule: "§2.2 evidence is for agent and task, not wait_until",
      lines: ["inputs: { at: datetime }", ...step("    wait_until: inputs.at", "    evidence: [link]")],
      issues: ["8:5 steps[0].evidence: not allowed on wait_until steps; allowed: id, wait_until, next"],
    },
    {
      rule: "§2.2 person is for task and approve, not agent",
      lines: step("    agent: Do it.", "    person: clerk"),
      issues: [
        "7:5 steps[0].person: not allowed on agent steps; allowed: id, agent, output, evidence, next, due, check, advisory",
      ],
    },
    {
      rule: "§2.2 on_reject is for approve, not task",
      lines: step("    task: Do it.", "    person: clerk", "    on_reject: a"),
      issues: [
        "8:5 steps[0].on_reject: not allowed on task steps; allowed: id, task, person, output, evidence, next, due, check, advisory",
      ],
    },
    {
      rule: "§2.2 due is for agent, task and approve, not wait",
      lines: step("    wait: 1h", "    due: 2h"),
      issues: ["7:5 steps[0].due: not allowed on wait steps; allowed: id, wait, next"],
    },
    {
      rule: "§2.2 due is not for wait_for",
      lines: step("    wait_for: paid", "    due: 2h"),
      issues: [
        "7:5 steps[0].due: not allowed on wait_for steps; allowed: id, wait_for, next, timeout, on_timeout",
      ],
    },
    {
      rule: "§2.2 timeout is for wait_for, not agent",
      lines: step("    agent: Do it.", "    timeout: 2h"),
      issues: [
        "7:5 steps[0].timeout: not allowed on agent steps; allowed: id, agent, output, evidence, next, due, check, advisory",
      ],
    },
    {
      rule: "§2.2 on_timeout is for wait_for, not approve",
      lines: step("    approve: Ok?", "    person: boss", "    on_timeout: done"),
      issues: [
        "8:5 steps[0].on_timeout: not allowed on approve steps; allowed: id, approve, person, next, on_reject, due",
      ],
    },
    {
      rule: "check.md §2 check is for agent and task, not approve",
      lines: step("    approve: Ok?", "    person: boss", "    check: Is it right?"),
      issues: [
        "8:5 steps[0].check: not allowed on approve steps; allowed: id, approve, person, next, on_reject, due",
      ],
    },
    {
      rule: "§2.2 a finish has no next",
      lines: ["steps:", "  - id: a", "    agent: A.", "  - id: done", "    finish: ok", "    next: a"],
      issues: ["9:5 steps[1].next: not allowed on finish steps; allowed: id, finish"],
    },
    {
      rule: "§2.2 every optional key of a task is accepted together",
      lines: step(
        "    task: Do it.",
        "    person: clerk",
        "    output: { ref: string }",
        "    evidence: [file, link]",
        "    due: 3d",
        "    next: done",
      ),
      issues: [],
    },
    {
      rule: "§2.2 task needs person",
      lines: step("    task: Do it."),
      issues: [`5:5 steps[0].person: required on task steps; use ${PERSON_FORMS}`],
    },
    {
      rule: "§2.2 approve needs person",
      lines: step("    approve: Ok?"),
      issues: [`5:5 steps[0].person: required on approve steps; use ${PERSON_FORMS}`],
    },
  ]);
});

describe("§2.2 kind values", () => {
  const step = (...lines: string[]) => ["steps:", "  - id: a", ...lines, "  - id: done", "    finish: ok"];
  table([
    {
      rule: "§2.2 agent instructions are non-empty text",
      lines: step('    agent: ""'),
      issues: ["6:12 steps[0].agent: must be non-empty text (the instructions)"],
    },
    {
      rule: "§2.2 agent instructions are not null",
      lines: step("    agent:"),
      issues: ["6:11 steps[0].agent: must be non-empty text (the instructions)"],
    },
    {
      rule: "§2.2 task instructions are not blank",
      lines: step('    task: "  "', "    person: clerk"),
      issues: ["6:11 steps[0].task: must be non-empty text (the instructions)"],
    },
    {
      rule: "§2.2 approve text is text",
      lines: step("    approve: 5", "    person: boss"),
      issues: ["6:14 steps[0].approve: must be non-empty text (what is being approved)"],
    },
    {
      rule: "§2.4 wait takes a duration",
      lines: step("    wait: 3 days"),
      issues: [`6:11 steps[0].wait: ${DURATION}`],
    },
    {
      rule: "§2.4 w is not a duration unit",
      lines: step("    wait: 3w"),
      issues: [`6:11 steps[0].wait: ${DURATION}`],
    },
    {
      rule: "§2.4 a bare number is not a duration",
      lines: step("    wait: 3"),
      issues: [`6:11 steps[0].wait: ${DURATION}`],
    },
    {
      rule: "§2.4 a fraction is not a duration",
      lines: step("    wait: 1.5h"),
      issues: [`6:11 steps[0].wait: ${DURATION}`],
    },
    {
      rule: "§2.4 an upper-case unit is not a duration",
      lines: step("    wait: 3D"),
      issues: [`6:11 steps[0].wait: ${DURATION}`],
    },
    {
      rule: "§2.4 a duration longer than 100 years is refused (our bound)",
      lines: step("    wait: 36501d"),
      issues: ["6:11 steps[0].wait: longer than 100 years (36500d); use a shorter duration"],
    },
    { rule: "§2.4 100 years is accepted", lines: step("    wait: 36500d"), issues: [] },
    { rule: "§2.4 0m is a duration (our decision)", lines: step("    wait: 0m"), issues: [] },
    {
      rule: "§2.2 wait_until is a path",
      lines: step("    wait_until: 5"),
      issues: [
        "6:17 steps[0].wait_until: must be a path to a datetime field, inputs.<field> or steps.<id>.output.<field>",
      ],
    },
    {
      rule: "§3.6 a wait_for event name matches the step id pattern",
      lines: step("    wait_for: Invoice Paid"),
      issues: ["6:15 steps[0].wait_for: an event name must match ^[a-z][a-z0-9_-]{0,63}$"],
    },
    {
      rule: "§3.6 a wait_for event name may contain hyphens",
      lines: step("    wait_for: final-invoice-settled"),
      issues: [],
    },
    {
      rule: "§2.2 a finish outcome is not empty",
      lines: ["steps:", "  - id: done", '    finish: ""'],
      issues: [
        "6:13 steps[0].finish: must be an outcome, a short word of 1–64 characters on one line (e.g. onboarded)",
      ],
    },
    {
      rule: "§2.2 a finish outcome is on one line",
      lines: ["steps:", "  - id: done", '    finish: "ok\\nthen more"'],
      issues: [
        "6:13 steps[0].finish: must be an outcome, a short word of 1–64 characters on one line (e.g. onboarded)",
      ],
    },
    {
      rule: "§2.2 a finish outcome is at most 64 characters",
      lines: ["steps:", "  - id: done", `    finish: ${"x".repeat(65)}`],
      issues: [
        "6:13 steps[0].finish: must be an outcome, a short word of 1–64 characters on one line (e.g. onboarded)",
      ],
    },
    {
      rule: "§2.2 a finish outcome is a short word",
      lines: ["steps:", "  - id: done", "    finish: onboarded"],
      issues: [],
    },
  ]);
});

describe("§2.2 next, on_reject, on_timeout", () => {
  table([
    {
      rule: "§2.2 next names an existing step",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: Do it.",
        "    next: aprove",
        "  - id: approve",
        "    finish: ok",
      ],
      issues: ['7:11 steps[0].next: unknown step "aprove"'],
    },
    {
      rule: "§2.2 next is a step id or a list",
      lines: ["steps:", "  - id: a", "    agent: Do it.", "    next: 5", "  - id: done", "    finish: ok"],
      issues: ["7:11 steps[0].next: expected a step id or a list of routes"],
    },
    {
      rule: "§2.2 a list next is allowed only on agent and task",
      lines: [
        "steps:",
        "  - id: a",
        "    approve: Ok?",
        "    person: boss",
        "    next: [b, done]",
        "  - id: b",
        "    agent: B.",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [
        "8:11 steps[0].next: a list of routes is allowed only on agent and task steps; use one step id",
      ],
    },
    {
      rule: "§2.2 a list next has two or more routes",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: Do it.",
        "    next: [done]",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ["7:11 steps[0].next: a list needs two or more routes; for one, write the step id"],
    },
    {
      rule: "§2.2 routes are step ids or { to, when }",
      lines: [
        "steps:",
        "  - id: a",
        "    task: Choose.",
        "    person: clerk",
        "    next:",
        "      - b",
        "      - { to: done, when: Nothing to do }",
        "  - id: b",
        "    agent: B.",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [],
    },
    {
      rule: "§2.2 a route object needs to",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "    next:",
        "      - done",
        "      - { when: Always }",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ["9:9 steps[0].next[1].to: required; the step id this route goes to"],
    },
    {
      rule: "§2.2 a route object has only to and when",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "    next:",
        "      - b",
        "      - { to: done, if: x }",
        "  - id: b",
        "    agent: B.",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ["9:21 steps[0].next[1].if: unknown field; allowed: to, when"],
    },
    {
      rule: "§2.2 a route's when is non-empty text",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "    next:",
        "      - b",
        '      - { to: done, when: "" }',
        "  - id: b",
        "    agent: B.",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ["9:27 steps[0].next[1].when: must be non-empty text"],
    },
    {
      rule: "§2.2 a route names an existing step",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "    next:",
        "      - done",
        "      - { to: nowhere }",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ['9:15 steps[0].next[1].to: unknown step "nowhere"'],
    },
    {
      rule: "§2.2 a route is a step id or an object",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "    next:",
        "      - done",
        "      - 5",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ["9:9 steps[0].next[1]: expected a step id or { to, when }"],
    },
    {
      rule: "§2.2 a route is listed once",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "    next: [b, b]",
        "  - id: b",
        "    agent: B.",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ['7:15 steps[0].next[1]: a route to "b" is listed twice'],
    },
    {
      rule: "§2.2 on_reject names an existing step",
      lines: [
        "steps:",
        "  - id: a",
        "    approve: Ok?",
        "    person: boss",
        "    on_reject: drafts",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ['8:16 steps[0].on_reject: unknown step "drafts"'],
    },
    {
      rule: "§2.2 on_reject is a step id",
      lines: [
        "steps:",
        "  - id: a",
        "    approve: Ok?",
        "    person: boss",
        "    on_reject: [a]",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ["8:16 steps[0].on_reject: expected a step id"],
    },
    {
      rule: "§2.2 on_timeout names an existing step",
      lines: [
        "steps:",
        "  - id: w",
        "    wait_for: paid",
        "    timeout: 3d",
        "    on_timeout: chas",
        "  - id: chase",
        "    task: Chase.",
        "    person: finance",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ['8:17 steps[0].on_timeout: unknown step "chas"'],
    },
    {
      rule: "§2.2 on_timeout needs a timeout (our decision: it could never fire)",
      lines: [
        "steps:",
        "  - id: w",
        "    wait_for: paid",
        "    on_timeout: chase",
        "  - id: chase",
        "    task: Chase.",
        "    person: finance",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ["7:5 steps[0].on_timeout: needs timeout; without a timeout it never fires"],
    },
    {
      rule: "§2.2 wait_for with timeout and on_timeout is accepted",
      lines: [
        "steps:",
        "  - id: w",
        "    wait_for: paid",
        "    timeout: 3d",
        "    on_timeout: chase",
        "  - id: chase",
        "    task: Chase.",
        "    person: finance",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [],
    },
    {
      rule: "§2.4 due is a duration",
      lines: ["steps:", "  - id: a", "    agent: A.", "    due: 2 days", "  - id: done", "    finish: ok"],
      issues: [`7:10 steps[0].due: ${DURATION}`],
    },
    {
      rule: "§2.4 timeout is a duration",
      lines: [
        "steps:",
        "  - id: w",
        "    wait_for: paid",
        "    timeout: 1w",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [`7:14 steps[0].timeout: ${DURATION}`],
    },
    {
      rule: "§2.2 join is an ordinary name without the parallel profile",
      lines: ["steps:", "  - id: a", "    agent: A.", "    next: join", "  - id: done", "    finish: ok"],
      issues: ['7:11 steps[0].next: unknown step "join"'],
    },
  ]);

  it("§2.2 route lists become { to, when? }; a single next stays a string", () => {
    const p = processOf(
      doc([
        "steps:",
        "  - id: a",
        "    agent: Choose.",
        "    next:",
        "      - b",
        "      - { to: done, when: Nothing to do }",
        "  - id: b",
        "    agent: B.",
        "    next: done",
        "  - id: done",
        "    finish: ok",
      ]),
    );
    expect(p.steps[0]).toMatchObject({
      kind: "agent",
      next: [{ to: "b" }, { to: "done", when: "Nothing to do" }],
    });
    expect(p.steps[1]).toMatchObject({ kind: "agent", next: "done" });
  });
});

describe("§5 evidence", () => {
  const step = (line: string) => [
    "steps:",
    "  - id: a",
    "    agent: A.",
    line,
    "  - id: done",
    "    finish: ok",
  ];
  table([
    {
      rule: "§5 evidence is a list",
      lines: step("    evidence: file"),
      issues: ["7:15 steps[0].evidence: must be a list of evidence kinds (file, link)"],
    },
    {
      rule: "§5 evidence kinds are file and link",
      lines: step("    evidence: [file, pdf]"),
      issues: ['7:22 steps[0].evidence[1]: unknown evidence kind "pdf"; use file or link'],
    },
    {
      rule: "§5 an evidence kind is listed once (our decision: one item meets it)",
      lines: step("    evidence: [file, file]"),
      issues: ['7:22 steps[0].evidence[1]: "file" is listed twice; one file item meets it'],
    },
    { rule: "§5 an empty evidence list requires nothing", lines: step("    evidence: []"), issues: [] },
  ]);
});

describe("§2.2 person and wait_until paths", () => {
  // Lines 4–25. Each case replaces one line of this valid file.
  const base = [
    "inputs:", // 4
    "  manager: person", // 5
    "  note: string", // 6
    "  startAt: datetime", // 7
    "  startDate: date", // 8
    "steps:", // 9
    "  - id: a", // 10
    "    task: Pick a buddy.", // 11
    "    person: inputs.manager", // 12
    "    output: { buddy: person, day: date, at: datetime }", // 13
    "  - id: b", // 14
    "    approve: Ok?", // 15
    "    person: steps.a.output.buddy", // 16
    "  - id: c", // 17
    "    wait_until: steps.a.output.at", // 18
    "  - id: d", // 19
    "    wait_until: inputs.startAt", // 20
    "  - id: e", // 21
    "    task: Sign.", // 22
    "    person: initiator", // 23
    "  - id: done", // 24
    "    finish: ok", // 25
  ];
  const replace = (line: number, text: string) => base.map((l, i) => (i + 4 === line ? text : l));

  it("§2.2 role names, initiator, declared person fields and datetime paths are accepted", () => {
    expect(issuesOf(doc(base))).toEqual([]);
    expect(processOf(doc(base)).roles).toEqual([]);
    expect(issuesOf(doc(replace(23, "    person: finance-approver")))).toEqual([]);
  });

  it.each([
    [
      12,
      "    person: inputs.note",
      "12:13 steps[0].person: inputs.note is a string field; person needs a person field",
    ],
    [
      12,
      "    person: inputs.boss",
      "12:13 steps[0].person: inputs.boss names no declared input; declare boss in inputs as person",
    ],
    [16, "    person: steps.z.output.buddy", '16:13 steps[1].person: steps.z.output.buddy names no step "z"'],
    [
      16,
      "    person: steps.a.output.pal",
      '16:13 steps[1].person: steps.a.output.pal names no declared output of step "a"',
    ],
    [
      16,
      "    person: steps.a.output.day",
      "16:13 steps[1].person: steps.a.output.day is a date field; person needs a person field",
    ],
    [
      16,
      "    person: steps.a.buddy",
      '16:13 steps[1].person: "steps.a.buddy" is not a valid path; use inputs.<field> or steps.<id>.output.<field>',
    ],
    [
      12,
      "    person: inputs.manager.email",
      '12:13 steps[0].person: "inputs.manager.email" is not a valid path; use inputs.<field> or steps.<id>.output.<field>',
    ],
    [
      23,
      "    person: Finance",
      `23:13 steps[4].person: "Finance" is not a role name (^[a-z][a-z0-9_-]{0,63}$); use ${PERSON_FORMS}`,
    ],
    [23, "    person: 7", `23:13 steps[4].person: expected ${PERSON_FORMS}`],
    [
      20,
      "    wait_until: inputs.startDate",
      "20:17 steps[3].wait_until: inputs.startDate is a date field; wait_until needs a datetime field",
    ],
    [
      18,
      "    wait_until: steps.a.output.day",
      "18:17 steps[2].wait_until: steps.a.output.day is a date field; wait_until needs a datetime field",
    ],
    [
      20,
      "    wait_until: inputs.missing",
      "20:17 steps[3].wait_until: inputs.missing names no declared input; declare missing in inputs as datetime",
    ],
    [
      20,
      "    wait_until: tomorrow",
      '20:17 steps[3].wait_until: "tomorrow" is not a valid path; use inputs.<field> or steps.<id>.output.<field>',
    ],
  ])("§2.2 line %i %j is refused", (line, text, issue) => {
    expect(issuesOf(doc(replace(line, text)))).toEqual([issue]);
  });

  it("§2.2 a path to a field whose declaration is refused reports only the declaration", () => {
    expect(issuesOf(doc(replace(5, "  manager: human")))).toEqual([
      `5:12 inputs.manager: unknown type "human"; use ${TYPES}`,
    ]);
  });
});

describe("§2.2 the graph", () => {
  table([
    {
      rule: "§2.2 every step is reachable from the first",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "    next: done",
        "  - id: b",
        "    agent: B.",
        "  - id: done",
        "    finish: ok",
      ],
      issues: ['8:5 steps[1]: step "b" cannot be reached from the first step'],
    },
    {
      rule: "§2.2 a step reached only through on_reject is reachable",
      lines: [
        "steps:",
        "  - id: review",
        "    approve: Ok?",
        "    person: boss",
        "    on_reject: fix",
        "    next: done",
        "  - id: fix",
        "    agent: Fix it.",
        "    next: review",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [],
    },
    {
      rule: "§2.2 a step reached only through on_timeout is reachable",
      lines: [
        "steps:",
        "  - id: w",
        "    wait_for: paid",
        "    timeout: 3d",
        "    on_timeout: chase",
        "    next: done",
        "  - id: done",
        "    finish: ok",
        "  - id: chase",
        "    task: Chase.",
        "    person: finance",
        "    next: done",
      ],
      issues: [],
    },
    {
      rule: "§2.2 a non-finish step that is last in the list names next",
      lines: ["steps:", "  - id: a", "    agent: A."],
      issues: ["5:5 steps[0]: a non-finish step that is last in the list must name next"],
    },
    {
      rule: "§2.2 a last step that names next is accepted",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "    next: b",
        "  - id: done",
        "    finish: ok",
        "  - id: b",
        "    approve: Ok?",
        "    person: boss",
        "    next: done",
      ],
      issues: [],
    },
    {
      rule: "§2.2 following next, no step is visited twice (a route back)",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "  - id: b",
        "    agent: B.",
        "    next: [a, done]",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [`9:12 steps[1].next[0]: creates a cycle (a → b → a); ${CYCLE_RULE}`],
    },
    {
      rule: "§2.2 a step cannot name itself as next",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "    next: [a, done]",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [`7:12 steps[0].next[0]: creates a cycle (a → a); ${CYCLE_RULE}`],
    },
    {
      rule: "§2.2 the default next counts as a next edge for cycles",
      lines: [
        "steps:",
        "  - id: x",
        "    agent: X.",
        "    next: z",
        "  - id: y",
        "    agent: Y.",
        "  - id: z",
        "    agent: Z.",
        "    next: [y, done]",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [
        `8:5 steps[1]: its default next, the following step "z", creates a cycle (z → y → z); ${CYCLE_RULE}`,
      ],
    },
    {
      rule: "§2.2 on_timeout edges count for cycles",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "  - id: w",
        "    wait_for: paid",
        "    timeout: 1d",
        "    on_timeout: a",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [`10:17 steps[1].on_timeout: creates a cycle (a → w → a); ${CYCLE_RULE}`],
    },
    {
      rule: "§2.2 on_reject is the only edge that goes back",
      lines: [
        "steps:",
        "  - id: a",
        "    agent: A.",
        "  - id: b",
        "    approve: Ok?",
        "    person: boss",
        "    on_reject: a",
        "  - id: done",
        "    finish: ok",
      ],
      issues: [],
    },
  ]);
});

describe("§2.3 field declarations", () => {
  /** `inputs: { amount: <decl> }` on line 5 (the declaration starts at column 11). */
  const input = (decl: string) => ["inputs:", `  amount: ${decl}`, ...FINISH_ONLY];
  table([
    { rule: "§2.3 a bare type name", lines: input("number"), issues: [] },
    {
      rule: "§2.3 types are the eight core types",
      lines: input("float"),
      issues: [`5:11 inputs.amount: unknown type "float"; use ${TYPES}`],
    },
    {
      rule: "§2.3 the long form's type is one of the eight",
      lines: input("{ type: float }"),
      issues: [`5:19 inputs.amount.type: unknown type "float"; use ${TYPES}`],
    },
    {
      rule: "§2.3 the long form needs type",
      lines: input("{ description: Spend }"),
      issues: [`5:11 inputs.amount.type: required; use ${TYPES}`],
    },
    {
      rule: "§2.3 a field object has only type, description, optional, one_of, items",
      lines: input("{ type: number, unit: usd }"),
      issues: ["5:27 inputs.amount.unit: unknown field; allowed: type, description, optional, one_of, items"],
    },
    {
      rule: "§2.3 description is text",
      lines: input("{ type: number, description: 5 }"),
      issues: ["5:40 inputs.amount.description: expected text"],
    },
    {
      rule: "§2.3 optional is true or false (yes is a string in the core schema)",
      lines: input("{ type: number, optional: yes }"),
      issues: ["5:37 inputs.amount.optional: expected true or false"],
    },
    {
      rule: "§2.3 optional: true is accepted",
      lines: input("{ type: number, optional: true, description: Spend }"),
      issues: [],
    },
    {
      rule: "§2.3 items only on list",
      lines: input("{ type: number, items: string }"),
      issues: ["5:27 inputs.amount.items: allowed only on list fields"],
    },
    {
      rule: "§2.3 items is a type name",
      lines: input("{ type: list, items: float }"),
      issues: [`5:32 inputs.amount.items: unknown type "float"; use ${TYPES}`],
    },
    {
      rule: "§2.3 items takes the keys of a field, optional included, as the authors' schema does (our rule)",
      lines: input("{ type: list, items: { type: string, optional: false } }"),
      issues: [],
    },
    {
      rule: "§2.3 items: optional is true or false, and unknown keys are refused",
      lines: input("{ type: list, items: { type: string, optional: sometimes, min: 1 } }"),
      issues: [
        "5:58 inputs.amount.items.optional: expected true or false",
        "5:69 inputs.amount.items.min: unknown field; allowed: type, description, optional, one_of, items",
      ],
    },
    {
      rule: "§2.3 items nest (a list of lists of objects)",
      lines: input("{ type: list, items: { type: list, items: { type: object, description: A row } } }"),
      issues: [],
    },
    {
      rule: "§2.3 a declaration is a type name or a field object",
      lines: input("5"),
      issues: ["5:11 inputs.amount: expected a type name or a field object with type"],
    },
    {
      rule: "§2.3 a declaration is not a list",
      lines: input("[number]"),
      issues: ["5:11 inputs.amount: expected a type name or a field object with type"],
    },
    {
      rule: "§2.3 a declaration is not empty",
      lines: ["inputs:", "  amount:", ...FINISH_ONLY],
      issues: ["5:10 inputs.amount: expected a type name or a field object with type"],
    },
    {
      rule: "§2.3 one_of is a non-empty list",
      lines: input("{ type: string, one_of: [] }"),
      issues: ["5:35 inputs.amount.one_of: must be a non-empty list of values"],
    },
    {
      rule: "§2.3 one_of values have the field's type (string)",
      lines: input("{ type: string, one_of: [low, 3] }"),
      issues: ["5:41 inputs.amount.one_of[1]: 3 is not a string; one_of values have the field's type"],
    },
    {
      rule: "§2.3 one_of values have the field's type (number)",
      lines: input('{ type: number, one_of: [1, "2"] }'),
      issues: ['5:39 inputs.amount.one_of[1]: "2" is not a number; one_of values have the field\'s type'],
    },
    {
      rule: "§2.3 one_of values have the field's type (boolean; yes is a string)",
      lines: input("{ type: boolean, one_of: [yes] }"),
      issues: ['5:37 inputs.amount.one_of[0]: "yes" is not a boolean; one_of values have the field\'s type'],
    },
    {
      rule: "§2.3 one_of values have the field's type (a real date)",
      lines: input("{ type: date, one_of: [2026-02-28, 2026-02-30] }"),
      issues: [
        '5:46 inputs.amount.one_of[1]: "2026-02-30" is not a date; one_of values have the field\'s type',
      ],
    },
    {
      rule: "§2.3 one_of values have the field's type (datetime with offset)",
      lines: input('{ type: datetime, one_of: ["2026-10-06T09:00:00"] }'),
      issues: [
        '5:38 inputs.amount.one_of[0]: "2026-10-06T09:00:00" is not a datetime; one_of values have the field\'s type',
      ],
    },
    {
      rule: "§2.3 one_of values have the field's type (person)",
      lines: input("{ type: person, one_of: [ops] }"),
      issues: ['5:36 inputs.amount.one_of[0]: "ops" is not a person; one_of values have the field\'s type'],
    },
    {
      rule: "§2.3 one_of lists each value once",
      lines: input("{ type: string, one_of: [a, a] }"),
      issues: ['5:39 inputs.amount.one_of[1]: "a" is listed twice'],
    },
    {
      rule: "§2.3 one_of is not for object fields",
      lines: input("{ type: object, one_of: [a] }"),
      issues: ["5:27 inputs.amount.one_of: not allowed on object fields"],
    },
    {
      rule: "§2.3 one_of on a list without items takes strings, numbers and booleans (the authors' schema)",
      lines: input("{ type: list, one_of: [a, 2, true] }"),
      issues: [],
    },
    {
      rule: "§2.3 one_of on a list without items: no lists, mappings or null, nothing twice",
      lines: input("{ type: list, one_of: [a, [b], null, a] }"),
      issues: [
        "5:37 inputs.amount.one_of[1]: a list is not a string, number or boolean; one_of on a list without items takes those",
        "5:42 inputs.amount.one_of[2]: null is not a string, number or boolean; one_of on a list without items takes those",
        '5:48 inputs.amount.one_of[3]: "a" is listed twice',
      ],
    },
    {
      rule: "§2.3 one_of on a list of objects is refused",
      lines: input("{ type: list, items: object, one_of: [a] }"),
      issues: [
        "5:40 inputs.amount.one_of: on a list, one_of applies to each item; declare items with a scalar type (string, number, boolean, date, datetime or person)",
      ],
    },
    {
      rule: "§2.3 one_of on a list has the item type",
      lines: input("{ type: list, items: number, one_of: [a] }"),
      issues: ['5:49 inputs.amount.one_of[0]: "a" is not a number; one_of values have the field\'s type'],
    },
    {
      rule: "§2.3 one_of on a list of strings, and inside items, is accepted",
      lines: [
        "inputs:",
        "  tags: { type: list, items: string, one_of: [a, b] }",
        "  scores: { type: list, items: { type: number, one_of: [1, 2.5] } }",
        "  answer: { type: string, one_of: [yes, no, on, off] }",
        ...FINISH_ONLY,
      ],
      issues: [],
    },
    {
      rule: "§2.3 field names: any name but one with a dot, a control character or over 128 characters (our rule)",
      lines: [
        "inputs:",
        "  first-name: string",
        "  a.b: string",
        "  __proto__: string",
        "  _ok: string",
        "  vendorName2: string",
        "  risk score: number",
        "  Straße: string",
        '  "tab\\there": string',
        `  ${"x".repeat(129)}: string`,
        `  ${"y".repeat(128)}: string`,
        ...FINISH_ONLY,
      ],
      issues: [
        "6:3 inputs.a.b: a field name cannot contain a dot: paths read it as two names (§2.2)",
        '7:3 inputs.__proto__: "__proto__" is reserved; use another field name',
        "12:3 inputs.tab\there: a field name cannot contain control characters",
        `13:3 inputs.${"x".repeat(129)}: a field name is at most 128 characters`,
      ],
    },
    {
      rule: "§2.3 output is a mapping of fields",
      lines: ["steps:", "  - id: a", "    agent: A.", "    output: [a]", "  - id: done", "    finish: ok"],
      issues: ["7:13 steps[0].output: expected a mapping of field name to type"],
    },
  ]);

  it("§2.3 declarations are kept as written (shorthand and long form)", () => {
    const p = processOf(
      doc(["inputs:", "  a: string", "  b: { type: number, description: Spend }", ...FINISH_ONLY]),
    );
    expect(p.inputs).toEqual({ a: "string", b: { type: "number", description: "Spend" } });
    expect(processOf(doc(FINISH_ONLY)).inputs).toEqual({});
  });
});

describe("Implementing Step 1: every issue at once", () => {
  it("§2 several mistakes in one file are all reported, in file order, with their positions", () => {
    const text = [
      "---",
      "name: Demo", // 2
      'description: ""', // 3
      "inputs:", // 4
      "  amount: float", // 5
      "steps:", // 6
      "  - id: check", // 7
      "    agent: Check it.", // 8
      "    next: aprove", // 9
      "    evidence: [pdf]", // 10
      "  - id: approve", // 11
      "    approve: Approve it.", // 12
      "    due: 2 days", // 13
      "  - id: done", // 14
      "    finish: ok", // 15
      "    next: check", // 16
      "---",
      "",
    ].join("\n");
    expect(issuesOf(text)).toEqual([
      `2:7 name: must match ${NAME_RULE}`,
      "3:14 description: must be non-empty text",
      `5:11 inputs.amount: unknown type "float"; use ${TYPES}`,
      '9:11 steps[0].next: unknown step "aprove"',
      '10:16 steps[0].evidence[0]: unknown evidence kind "pdf"; use file or link',
      `11:5 steps[1].person: required on approve steps; use ${PERSON_FORMS}`,
      `13:10 steps[1].due: ${DURATION}`,
      "16:5 steps[2].next: not allowed on finish steps; allowed: id, finish",
    ]);
  });

  it("§2.2 structural and graph issues are reported together", () => {
    const lines = [
      "steps:", // 4
      "  - id: a", // 5
      "    agent: A.", // 6
      "    due: soon", // 7
      "    next: [a, done]", // 8
      "  - id: lost", // 9
      "    agent: Nobody comes here.", // 10
      "    next: done", // 11
      "  - id: done", // 12
      "    finish: ok", // 13
    ];
    expect(issuesOf(doc(lines))).toEqual([
      `7:10 steps[0].due: ${DURATION}`,
      `8:12 steps[0].next[0]: creates a cycle (a → a); ${CYCLE_RULE}`,
      '9:5 steps[1]: step "lost" cannot be reached from the first step',
    ]);
  });
});
