/**
 * What the conformance suite must prove, item by item (issue #9, docs/conformance-matrix.md): every
 * item of the reviewers' checklist (`conformance/CONFORMANCE-CHECKLIST.md`), every error of every
 * tool (`conformance/tools.md`, revision 10).
 *
 * A test says what it proves by a tag at the start of its name: the ids of its items in brackets,
 * separated by spaces — `it("[R2-5 #50 submit.conflict:requestId] expense: …")`. Ids:
 *
 * - checklist scenarios by their own names: `R1-0`…`R1-10`, `R2-discovery`, `R2-1`…`R2-10`,
 *   `R2-extra-a`, `R2-extra-b`, `R3-1a`…`R3-3e`;
 * - the round-1 table "two servers could behave differently" by its numbers: `#1`…`#100`
 *   (`#36-37`, `#89-90` for the joined rows);
 * - the round-2 two-behaviour points in their order: `R2-B1`…`R2-B16`;
 * - the round-3 open points: `R3-Q1`…`R3-Q13` by number, then the unnumbered rows in order;
 * - the wrinkles found while mapping: `W1`…`W6`;
 * - tool errors: `<tool>.<code>` with `:<detail>` where one code has several cases
 *   (`claim.conflict:not_ready`, `start_run.invalid:initiator`).
 *
 * No I/O here: the matrix script and its guard read the vendored files and pass them in.
 */

/** One thing the suite must prove. */
export interface Item {
  id: string;
  /** Where it is listed: a checklist section, or the tool whose error it is. */
  group: string;
  /** What it says, in one line. */
  text: string;
}

/** The grammar of one tag id (see the file comment). */
export const ITEM_ID =
  /^(?:#\d+(?:-\d+)?|R1-\d+|R2-(?:discovery|\d+|extra-[ab]|B\d+)|R3-(?:\d[a-e]|Q\d+)|W\d+|[a-z_]+\.[a-z_]+(?::[a-zA-Z_]+)?)$/;

/** The ids a test's own name declares, or [] when it has no tag. */
export function tagsOf(testName: string): string[] {
  const m = /^\[([^\]]+)\] /.exec(testName);
  return m ? (m[1] as string).split(" ") : [];
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").replace(/\*\*/g, "").trim();

/** The cells of a Markdown table row, or undefined for a line that is not one. */
function cells(line: string): string[] | undefined {
  if (!line.startsWith("|") || /^\|[-|: ]+\|$/.test(line)) return undefined;
  return line
    .slice(1, line.endsWith("|") ? -1 : undefined)
    .split(" | ")
    .map((c) => c.trim());
}

/**
 * Every item of the checklist, in file order. Throws when a line the parser expects an id in has
 * none, so a changed checklist cannot silently drop items.
 */
export function checklistItems(markdown: string): Item[] {
  const items: Item[] = [];
  let round = "";
  let section = "";
  let openPoint = 0;
  let behaviour = 0;
  let wrinkle = 0;
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    // A bullet or paragraph continues on the indented lines after it.
    const continued = () => {
      let text = line;
      while (i + 1 < lines.length && /^ {2,}\S/.test(lines[i + 1] as string)) text += ` ${lines[++i]}`;
      return oneLine(text);
    };
    if (line.startsWith("## ")) {
      round = line.slice(3).replace(/ \(.*$/, "");
      section = round;
      continue;
    }
    if (line.startsWith("### ")) {
      section = `${round} — ${line.slice(4).replace(/ →.*$/, "")}`;
      continue;
    }
    if (line.startsWith("Discovery before every run:")) {
      items.push({ id: "R2-discovery", group: `${round} — Discovery`, text: continued() });
      continue;
    }
    const scenario = /^- \[ \] \*\*(R[123]-(?:extra [ab]|\d+[a-e]?))[: ]/.exec(line);
    if (scenario) {
      const id = (scenario[1] as string).replace(" ", "-");
      items.push({ id, group: section, text: continued().replace(/^- \[ \] /, "") });
      continue;
    }
    if (line.startsWith("- [ ]")) throw new Error(`checklist line ${i + 1}: a scenario without an id`);
    if (round === "Wrinkles found while mapping" && line.startsWith("- ")) {
      items.push({ id: `W${++wrinkle}`, group: round, text: continued().slice(2) });
      continue;
    }
    const row = cells(line);
    if (!row || row[0] === "#" || row[0] === "Point (process)") continue;
    if (section.endsWith("Task 2, items 1–100)")) {
      const id = `#${(row[0] as string).replace("–", "-")}`;
      if (!/^#\d+(-\d+)?$/.test(id)) throw new Error(`checklist line ${i + 1}: no divergence number`);
      items.push({ id, group: section, text: `${row[1]} — ${row[2]}` });
    } else if (section.includes("Two-behaviour points")) {
      items.push({ id: `R2-B${++behaviour}`, group: section, text: `${row[0]} — ${row[2]}` });
    } else if (section.includes("Open points the reviewer raised")) {
      openPoint = row[0] === "—" ? openPoint + 1 : Number(row[0]);
      if (!Number.isInteger(openPoint) || openPoint < 1)
        throw new Error(`checklist line ${i + 1}: no open-point number`);
      items.push({ id: `R3-Q${openPoint}`, group: section, text: `${row[1]} — ${row[2]}` });
    }
  }
  return items;
}

/** One error a tool's contract names, and where it says so. */
export interface ToolError {
  id: string;
  tool: string;
  code: string;
  /** The case, when a code has several (`claimed_by_other`, `initiator`). */
  detail?: string;
  /** The tools.md section (a tool's name) or the specification section that names it. */
  source: string;
  says: string;
}

/** The 14 tools of core-2 (§4.1, §4.2). */
export const TOOLS = [
  "describe",
  "list_processes",
  "start_run",
  "get_run",
  "get_work",
  "claim",
  "submit",
  "escalate",
  "decide",
  "cancel",
  "renew",
  "upload",
  "send_event",
  "list_runs",
] as const;

/** The tools that write, each taking a `requestId` (tools.md: "All writes take requestId"). */
export const WRITES = [
  "start_run",
  "claim",
  "submit",
  "escalate",
  "decide",
  "cancel",
  "renew",
  "upload",
  "send_event",
] as const;

const error = (
  tool: string,
  code: string,
  detail: string | undefined,
  source: string,
  says: string,
): ToolError => ({
  id: `${tool}.${code}${detail ? `:${detail}` : ""}`,
  tool,
  code,
  ...(detail ? { detail } : {}),
  source,
  says,
});

const RUN_ENDED =
  "every write to the run other than a replay returns conflict with run_ended, checked before anything else";

/**
 * Every error of every tool: what tools.md names in each tool's section (a token that does not
 * verify is named once, under `claim`, "on any tool that takes one"), and what the specification
 * names for all tools of a kind — `invalid` for arguments that break the schema (§6 rule 3), `conflict`
 * for a `requestId` reused with other arguments (§4), `run_ended` on an ended run (§3.5), `not_found`
 * for a run or process outside the organization (§4.3), `forbidden` for a caller the tool is not for
 * (§4.1 "Who").
 */
export const TOOL_ERRORS: ToolError[] = [
  error(
    "start_run",
    "invalid",
    "inputs",
    "start_run",
    "Undeclared or mistyped inputs → invalid with issues.",
  ),
  error(
    "start_run",
    "invalid",
    "initiator",
    "start_run",
    "A process with any step assigned to initiator, when the caller is an agent identity → invalid.",
  ),
  error("start_run", "not_found", undefined, "§4.3", "No such process (or version) in this organization."),
  error("get_run", "not_found", undefined, "§4.3", "No such run in this organization."),
  error("get_work", "invalid", "paging", "get_work", "limit is 1–100; a cursor is one the server issued."),
  error("list_processes", "invalid", "paging", "list_processes", "Paged like get_work."),
  error("list_runs", "invalid", "paging", "list_runs", "limit and cursor as get_work."),
  error("claim", "conflict", "claimed_by_other", "claim", "Another caller holds a live claim."),
  error("claim", "conflict", "claimed_by_you", "claim", "The caller holds a live claim."),
  error("claim", "conflict", "not_ready", "claim", "The step is not ready otherwise."),
  error(
    "claim",
    "forbidden",
    undefined,
    "claim",
    "A non-agent step, or a caller that is not an agent (§4.1).",
  ),
  error("claim", "not_found", undefined, "§4.3", "No such run or step in this organization."),
  error("claim", "conflict", "run_ended", "§3.5", RUN_ENDED),
  error("submit", "not_accepted", undefined, "submit", "Issues such as output.x: missing; nothing changed."),
  error("submit", "stale", undefined, "submit", "The token's lease ended or the claim was replaced."),
  error("submit", "conflict", "run_ended", "submit", "The run has ended or been cancelled, checked first."),
  error("submit", "invalid", "token", "claim", "A token that does not verify, on any tool that takes one."),
  error("renew", "stale", undefined, "renew", "After the lease ended, or with a token renew replaced."),
  error("renew", "invalid", "token", "claim", "A token that does not verify, on any tool that takes one."),
  error("renew", "conflict", "run_ended", "§3.5", RUN_ENDED),
  error("escalate", "stale", undefined, "§4.3", "The token or claim is no longer current."),
  error("escalate", "invalid", "token", "claim", "A token that does not verify, on any tool that takes one."),
  error("escalate", "conflict", "run_ended", "§3.5", RUN_ENDED),
  error("decide", "conflict", "run_ended", "decide", "The run has ended or been cancelled (checked first)."),
  error("decide", "conflict", "already_decided", "decide", "The item was decided (checked second)."),
  error("decide", "not_found", undefined, "decide", "The item never existed on this run (third)."),
  error(
    "decide",
    "stale",
    undefined,
    "decide",
    "The snapshot is not current (fourth); get_run gives a fresh one.",
  ),
  error(
    "decide",
    "forbidden",
    undefined,
    "decide",
    "A non-human identity or a person outside the assignment (fifth).",
  ),
  error("decide", "not_accepted", undefined, "decide", "As for submit (last)."),
  error(
    "decide",
    "invalid",
    "combination",
    "decide",
    "next/reason on a decision other than completed; note with completed; output, evidence or summary with anything but completed; a decision the item does not take or without what it requires.",
  ),
  error(
    "decide",
    "order",
    undefined,
    "decide",
    "Errors in the order checked: run_ended, already_decided, not_found, stale, forbidden, not_accepted.",
  ),
  error("cancel", "conflict", "run_ended", "cancel", "On an ended run."),
  error("cancel", "forbidden", undefined, "§4.1", "Only an operator cancels."),
  error("cancel", "not_found", undefined, "§4.3", "No such run in this organization."),
  error(
    "send_event",
    "forbidden",
    undefined,
    "send_event",
    "From an agent identity or an operator; forbidden otherwise.",
  ),
  error("send_event", "conflict", "run_ended", "send_event", "On an ended run."),
  error("send_event", "not_found", undefined, "§4.3", "No such run in this organization."),
  ...TOOLS.map((tool) =>
    error(
      tool,
      "invalid",
      "arguments",
      "§6 rule 3",
      "Arguments that break the tool's schema, such as a missing required one, are invalid.",
    ),
  ),
  ...WRITES.map((tool) =>
    error(
      tool,
      "conflict",
      "requestId",
      "§4",
      "Repeating a requestId with different arguments is a conflict.",
    ),
  ),
];

/** What a covered item's proof leaves unsaid (shown beside the tests in the matrix). */
export const NOTES: Record<string, string> = {
  "#74":
    "over MCP, the assignee sees `overdue` on the item; the notice itself is the `step.overdue` event (distributed only), once per attempt.",
  "#87":
    "the MCP run shows the upload-time hash; a file whose stored bytes changed is refused by the engine (unit test).",
};
