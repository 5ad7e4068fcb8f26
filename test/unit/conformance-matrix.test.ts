import { readFileSync } from "node:fs";
import { checklistItems, TOOL_ERRORS, TOOLS, tagsOf } from "@baton/conformance/items";
import { describe, expect, it } from "vitest";
import {
  buildMatrix,
  type CollectedTest,
  collectTests,
  readSources,
} from "../../scripts/conformance-matrix.ts";

/**
 * The conformance matrix (issue #9) cannot go stale: it is regenerated here from vitest's own
 * collection and compared with the checked-in file, and every item must be proven. The guard itself
 * is tested on made-up collections, so a hole it should see is seen.
 */

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const sources = readSources();
const CONF = "test/conformance/conformance.test.ts";
const EMBEDDED = "conformance — embedded (baton dev)";
const DISTRIBUTED = "conformance — distributed (baton serve over NATS and PostgreSQL)";

/** A collection in which every item but `except` is proven by one test in both deployments. */
function collection(except: string[] = [], extra: CollectedTest[] = []): CollectedTest[] {
  const ids = [...checklistItems(sources.checklist).map((i) => i.id), ...TOOL_ERRORS.map((e) => e.id)].filter(
    (id) => !except.includes(id),
  );
  const title = `§0 group > [${ids.join(" ")}] every item at once`;
  return [
    { file: CONF, name: `${EMBEDDED} > ${title}` },
    { file: CONF, name: `${DISTRIBUTED} > ${title}` },
    {
      file: "libs/process/src/validate-core.test.ts",
      name: "§2.1 frontmatter fields > §2.1 name is required",
    },
    ...extra,
  ];
}

describe("the conformance matrix guard", () => {
  it("a made-up collection proving every item has no problem", () => {
    expect(buildMatrix(collection(), sources).problems).toEqual([]);
  });

  it("an item whose test lost its tag, was skipped or was not collected is reported", () => {
    expect(buildMatrix(collection(["R2-5"]), sources).problems).toEqual([
      "R2-5: no collected test proves it",
    ]);
  });

  it("an item proven in one deployment only is reported", () => {
    const title = "§0 group > [#41] only here";
    const problems = buildMatrix(
      collection(["#41"], [{ file: CONF, name: `${DISTRIBUTED} > ${title}` }]),
      sources,
    ).problems;
    expect(problems).toEqual(["#41: no test proves it over MCP in both deployments"]);
  });

  it("a tag that names no item is reported", () => {
    const problems = buildMatrix(
      collection(
        [],
        [
          { file: CONF, name: `${EMBEDDED} > §0 group > [#101 R3-1a] a typo and a profile item` },
          { file: CONF, name: `${DISTRIBUTED} > §0 group > [#101 R3-1a] a typo and a profile item` },
        ],
      ),
      sources,
    ).problems;
    expect(problems).toEqual([
      `${CONF}: "${EMBEDDED} > §0 group > [#101 R3-1a] a typo and a profile item" names #101, which is no item`,
      `${CONF}: "${DISTRIBUTED} > §0 group > [#101 R3-1a] a typo and a profile item" names #101, which is no item`,
    ]);
  });

  it("a test's tag is the bracketed list at the start of its own name", () => {
    expect(tagsOf("[R2-5 #50 submit.conflict:requestId] expense: 85.5")).toEqual([
      "R2-5",
      "#50",
      "submit.conflict:requestId",
    ]);
    expect(tagsOf("expense [R2-5] later in the title")).toEqual([]);
  });
});

describe("the items", () => {
  it("the vendored checklist yields every item of every section, with the ids the checklist uses", () => {
    const items = checklistItems(sources.checklist);
    const count = (prefix: RegExp) => items.filter((i) => prefix.test(i.id)).length;
    // Counted by hand in conformance/CONFORMANCE-CHECKLIST.md.
    expect({
      round1: count(/^R1-/),
      divergences: count(/^#/),
      round2: count(/^R2-(\d|extra|discovery)/),
      behaviours: count(/^R2-B/),
      round3: count(/^R3-\d/),
      openPoints: count(/^R3-Q/),
      wrinkles: count(/^W/),
    }).toEqual({
      round1: 11,
      divergences: 98,
      round2: 13,
      behaviours: 16,
      round3: 11,
      openPoints: 18,
      wrinkles: 6,
    });
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
    expect(items.find((i) => i.id === "#36-37")?.text).toMatch(/^operator retry of failed step/);
    expect(items.find((i) => i.id === "R3-Q14")?.text).toMatch(/^Submit replay after expiry/);
  });

  it("every error code and issue tools.md names in a tool's section is an item (conformance/tools.md)", () => {
    const CODES = ["invalid", "not_accepted", "stale", "conflict", "forbidden", "not_found", "retry"];
    const sections = read("conformance/tools.md").split(/^## /m).slice(1);
    const named: string[] = [];
    for (const section of sections) {
      const tool = section.slice(0, section.indexOf("\n")).trim();
      if (!(TOOLS as readonly string[]).includes(tool)) continue;
      for (const [, code] of section.matchAll(/`([a-z_]+)`/g))
        if (CODES.includes(code as string)) named.push(`${tool}: ${code}`);
      for (const [, issue] of section.matchAll(/`(?:issues: )?\["([a-z_]+)"\]`/g))
        named.push(`${tool}: ${issue}`);
    }
    expect(named.length).toBeGreaterThan(15);
    const listed = (entry: string) => {
      const [source, what] = entry.split(": ");
      return TOOL_ERRORS.some((e) => e.source === source && (e.code === what || e.detail === what));
    };
    expect(named.filter((n) => !listed(n))).toEqual([]);
  });
});

it("docs/conformance-matrix.md is the matrix of the tests vitest collects, and proves every item (issue #9)", () => {
  const { markdown, problems } = buildMatrix(collectTests(), sources);
  expect(
    problems,
    "each item needs a collected test that carries its id and runs in both deployments",
  ).toEqual([]);
  expect(read("docs/conformance-matrix.md"), "run pnpm conformance-matrix and commit the file").toBe(
    markdown,
  );
}, 240_000);
