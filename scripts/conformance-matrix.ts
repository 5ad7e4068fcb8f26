/**
 * Generates docs/conformance-matrix.md (issue #9): every item of the reviewers' checklist, every error
 * of every tool in tools.md and every §2 rule of the process library's rule table, each with the tests
 * that prove it. The tests are found through vitest's own collection (`vitest list`), so a test that
 * is renamed away from its tag, skipped, or not collected at all stops counting.
 *
 * `pnpm conformance-matrix` writes the file and exits 1 while any item is unproven;
 * test/unit/conformance-matrix.test.ts fails when the checked-in file is out of date or any item is.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
  checklistItems,
  ITEM_ID,
  type Item,
  NOTES,
  TOOL_ERRORS,
  TOOLS,
  tagsOf,
} from "@baton/conformance/items";

const REPO = fileURLToPath(new URL("../", import.meta.url));

/** Where the tests that may prove an item live: the conformance suite and the two core libraries' unit tests. */
export const COLLECTED = ["test/conformance/", "libs/process/src/", "libs/engine/src/"];
/** The process library's rule table. */
const RULE_TABLE = "libs/process/src/validate-core.test.ts";

/** One test vitest collected (and will run): its full name and its file, relative to the repository. */
export interface CollectedTest {
  name: string;
  file: string;
}

/**
 * The tests vitest collects under {@link COLLECTED}, skipped ones left out (`vitest list` omits
 * them), sorted by file and kept in definition order within a file. Throws when vitest fails.
 */
export function collectTests(): CollectedTest[] {
  const dir = mkdtempSync(join(tmpdir(), "baton-matrix-"));
  try {
    const out = join(dir, "tests.json");
    // A vitest run that spawns this must not hand its own worker settings to the child.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST")));
    const listed = spawnSync(
      process.execPath,
      [join(REPO, "node_modules/vitest/vitest.mjs"), "list", `--json=${out}`, ...COLLECTED],
      { cwd: REPO, env, encoding: "utf8", timeout: 170_000 },
    );
    if (listed.status !== 0) throw new Error(`vitest list failed:\n${listed.stdout}\n${listed.stderr}`);
    const tests = JSON.parse(readFileSync(out, "utf8")) as { name: string; file: string }[];
    const byFile = new Map<string, string[]>();
    for (const t of tests) {
      const file = relative(REPO, t.file);
      byFile.set(file, [...(byFile.get(file) ?? []), t.name]);
    }
    return [...byFile.keys()]
      .sort()
      .flatMap((file) => (byFile.get(file) as string[]).map((name) => ({ name, file })));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The vendored texts the items come from. */
export interface Sources {
  checklist: string;
}

/** The vendored checklist. */
export function readSources(): Sources {
  return { checklist: readFileSync(join(REPO, "conformance/CONFORMANCE-CHECKLIST.md"), "utf8") };
}

/** A test as the matrix cites it: one row per title, with the deployments it runs in. */
interface Proof {
  /** The scenario group (the describe under the deployment) or the unit test's file. */
  where: string;
  title: string;
  deployments: Set<string>;
  unit: boolean;
}

const DEPLOYMENT = /^.+ — (embedded|distributed) /;

/** Splits a conformance test's full name into its deployment and the rest. */
function proofOf(test: CollectedTest): { key: string; proof: Proof } {
  const parts = test.name.split(" > ");
  const title = parts[parts.length - 1] as string;
  const deployment = DEPLOYMENT.exec(parts[0] as string)?.[1];
  if (test.file.startsWith("test/conformance/") && deployment) {
    const where = (parts[1] as string).split(":")[0] as string;
    const key = parts.slice(1).join(" > ");
    return { key, proof: { where, title, deployments: new Set([deployment]), unit: false } };
  }
  return {
    key: `${test.file} > ${test.name}`,
    proof: { where: test.file, title, deployments: new Set(), unit: true },
  };
}

/** The generated Markdown and what is wrong with the coverage (empty when every item is proven). */
export interface Matrix {
  markdown: string;
  problems: string[];
}

const cell = (text: string) => text.replace(/\|/g, "\\|");
const short = (text: string, max = 220) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Builds the matrix from the collected tests and the vendored sources. */
export function buildMatrix(tests: CollectedTest[], sources: Sources): Matrix {
  const problems: string[] = [];
  const checklist = checklistItems(sources.checklist);
  const toolItems: Item[] = TOOL_ERRORS.map((e) => ({ id: e.id, group: e.tool, text: e.says }));
  const items = [...checklist, ...toolItems];
  const known = new Set(items.map((i) => i.id));
  for (const id of Object.keys(NOTES))
    if (!known.has(id)) problems.push(`${id}: listed with a note, but no item has that id`);

  // Tag → proofs, one per test title, merging the deployments it runs in.
  const proofs = new Map<string, Map<string, Proof>>();
  for (const test of tests) {
    const { key, proof } = proofOf(test);
    for (const tag of tagsOf(proof.title)) {
      if (!ITEM_ID.test(tag) || !known.has(tag)) {
        problems.push(`${test.file}: "${short(test.name, 120)}" names ${tag}, which is no item`);
        continue;
      }
      const byKey = proofs.get(tag) ?? new Map<string, Proof>();
      const seen = byKey.get(key);
      if (seen) for (const d of proof.deployments) seen.deployments.add(d);
      else byKey.set(key, { ...proof, deployments: new Set(proof.deployments) });
      proofs.set(tag, byKey);
    }
  }

  const proven = new Set<string>();
  const status = (item: Item): string => {
    const found = [...(proofs.get(item.id)?.values() ?? [])];
    if (found.length === 0) {
      problems.push(`${item.id}: no collected test proves it`);
      return "**no test**";
    }
    if (found.some((p) => p.deployments.has("embedded") && p.deployments.has("distributed")))
      proven.add(item.id);
    else problems.push(`${item.id}: no test proves it over MCP in both deployments`);
    const lines = found.map((p) => {
      const mark = p.unit
        ? ` *(unit test, ${p.where})*`
        : p.deployments.size === 2
          ? ""
          : ` *(${[...p.deployments].join(", ")} only)*`;
      // The row names the item; the title is cited without its tag.
      return `${p.unit ? "" : `${p.where} › `}${p.title.replace(/^\[[^\]]+\] /, "")}${mark}`;
    });
    if (NOTES[item.id]) lines.push(`*Note:* ${NOTES[item.id]}`);
    return lines.map(cell).join("<br>");
  };

  // A table row's name is its rule; vitest quotes a `$rule` taken from the row.
  const ruleOf = (test: CollectedTest) => (test.name.split(" > ").pop() as string).replace(/^'(.*)'$/, "$1");
  const rules = tests.filter((t) => t.file === RULE_TABLE && /^§2[ .]/.test(ruleOf(t)));
  if (rules.length === 0) problems.push(`${RULE_TABLE}: no §2 rule collected`);

  const out: string[] = ["## Checklist"];
  let group = "";
  for (const item of checklist) {
    if (item.group !== group) {
      group = item.group;
      out.push("", `### ${group}`, "", "| id | item | proven by |", "|---|---|---|");
    }
    out.push(`| ${item.id} | ${cell(short(item.text))} | ${status(item)} |`);
  }
  out.push(
    "",
    "## Tool errors",
    "",
    "What `conformance/tools.md` names in each tool's section, and what the specification names for every tool",
    "of a kind: `invalid` arguments (§6 rule 3), a reused `requestId` (§4), `run_ended` (§3.5), `not_found`",
    "outside the organization (§4.3), `forbidden` for a caller the tool is not for (§4.1).",
  );
  for (const tool of TOOLS) {
    out.push("", `### ${tool}`, "", "| id | source | says | proven by |", "|---|---|---|---|");
    for (const e of TOOL_ERRORS.filter((x) => x.tool === tool)) {
      const item = toolItems.find((i) => i.id === e.id) as Item;
      out.push(`| ${e.id} | ${e.source} | ${cell(e.says)} | ${status(item)} |`);
    }
  }
  out.push(
    "",
    "## §2 rules of the process library",
    "",
    `Each row of the rule table in \`${RULE_TABLE}\` whose rule is from §2 is its own test (a refused file with`,
    "its exact issues, or an accepted one); the server refuses at publication what the library refuses (see the",
    "`publication` scenarios above).",
    "",
    "| rule (the test) | group |",
    "|---|---|",
  );
  for (const rule of rules) {
    const parts = rule.name.split(" > ");
    out.push(`| ${cell(ruleOf(rule))} | ${cell(parts.slice(0, -1).join(" › "))} |`);
  }
  const count = (list: Item[]) => list.filter((i) => proven.has(i.id)).length;
  const head = [
    "# Conformance matrix",
    "",
    "Generated by `pnpm conformance-matrix` from vitest's own collection of the tests; do not edit by hand.",
    "`test/unit/conformance-matrix.test.ts` fails when this file is out of date, when an item has no test that",
    "vitest collects and runs (in both deployments, for the checklist and the tool errors), or when a test names",
    "an item that does not exist.",
    "",
    "A conformance test names what it proves in brackets at the start of its title, e.g.",
    "`[R2-5 #50 submit.conflict:requestId] expense: …`; `libs/conformance/src/items.ts` defines the ids. Find the tests",
    'of an item with `pnpm vitest run test/conformance -t "R2-5"`. Unless marked, every test cited here runs over',
    "a real MCP client against both deployments, `baton dev` and the services on NATS and PostgreSQL",
    "(`test/conformance/conformance.test.ts`; with a manual clock, `test/conformance/timed.test.ts`); it is cited",
    "as its scenario group (`libs/conformance/src/scenarios/`) › its title, without the tag.",
    "",
    "| | items | proven |",
    "|---|---|---|",
    `| checklist (\`conformance/CONFORMANCE-CHECKLIST.md\`) | ${checklist.length} | ${count(checklist)} |`,
    `| tool errors (\`conformance/tools.md\`, revision 10) | ${toolItems.length} | ${count(toolItems)} |`,
    `| §2 rules (\`${RULE_TABLE}\`) | ${rules.length} | ${rules.length} |`,
    "",
  ];
  return { markdown: `${[...head, ...out].join("\n")}\n`, problems };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { markdown, problems } = buildMatrix(collectTests(), readSources());
  writeFileSync(join(REPO, "docs/conformance-matrix.md"), markdown);
  if (problems.length > 0) {
    process.stderr.write(`${problems.length} problems:\n${problems.join("\n")}\n`);
    process.exit(1);
  }
}
