import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  EXIT,
  parseRunnerArgs,
  parseTokensFile,
  requiredGroups,
  TokenSlots,
  type TokensFile,
  tokensTemplate,
} from "./options.ts";

/**
 * `baton conformance`'s command line and tokens file (issue #18, docs/conformance-runner.md): what
 * is refused with exit 2 before anything runs, and how the scenarios' identities map onto the file.
 */

/** A filled-in template: every placeholder replaced by a token naming its identity. */
function filled(): TokensFile {
  return JSON.parse(JSON.stringify(tokensTemplate()).replace(/<bearer token of ([^>]+)>/g, "tok:$1"));
}

function tokensPath(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "baton-tokens-"));
  const file = join(dir, "tokens.json");
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

describe("baton conformance arguments (exit codes: docs/conformance-runner.md)", () => {
  it("exit codes: 0 passed, 1 failed, 2 could not run", () => {
    expect(EXIT).toEqual({ passed: 0, failed: 1, cannotRun: 2 });
  });

  it("a run with --data-dir, --clock baton, --only and --junit", () => {
    expect(
      parseRunnerArgs([
        "--url",
        "http://127.0.0.1:7800/mcp",
        "--data-dir",
        ".baton",
        "--clock",
        "baton",
        "--only",
        "R2-5",
        "--junit",
        "out.xml",
      ]),
    ).toEqual({
      kind: "run",
      options: {
        url: "http://127.0.0.1:7800/mcp",
        tokens: null,
        dataDir: ".baton",
        clock: "baton",
        only: "R2-5",
        json: false,
        junit: "out.xml",
      },
    });
  });

  it("a run with --tokens reads and checks the file", () => {
    const file = tokensPath(filled());
    const parsed = parseRunnerArgs(["--url", "https://ap.example.com/mcp", "--tokens", file, "--json"]);
    expect(parsed).toMatchObject({ kind: "run", options: { json: true, clock: null, dataDir: null } });
    expect(parsed.kind === "run" && parsed.options.tokens?.operator.token).toBe("tok:operator@example.com");
  });

  it("--print-tokens-template and --help need nothing else", () => {
    expect(parseRunnerArgs(["--print-tokens-template"])).toEqual({ kind: "template" });
    expect(parseRunnerArgs(["--help"])).toEqual({ kind: "help" });
  });

  it.each([
    [[], /--url/],
    [["--url", "ftp://x/mcp", "--data-dir", "d"], /not an http\(s\) URL/],
    [["--url", "not a url", "--data-dir", "d"], /not an http\(s\) URL/],
    [["--url", "http://x/mcp"], /--tokens FILE/],
    [["--url", "http://x/mcp", "--tokens", "t.json", "--data-dir", "d"], /not both/],
    [["--url", "http://x/mcp", "--data-dir", "d", "--clock", "real"], /--clock baton/],
    [["--url", "http://x/mcp", "--data-dir", "d", "--json", "--junit", "f"], /--json or --junit/],
    [["--url", "http://x/mcp", "--data-dir", "d", "--only", "("], /not a regular expression/],
    [["--url", "http://x/mcp", "--data-dir", "d", "--verbose"], /verbose/],
    [["--url", "http://x/mcp", "--tokens", "/nonexistent/tokens.json"], /ENOENT/],
  ])("refused (exit 2): %j", (argv, message) => {
    const parsed = parseRunnerArgs(argv);
    expect(parsed.kind).toBe("error");
    expect(parsed.kind === "error" && parsed.message).toMatch(message);
  });
});

describe("the tokens file", () => {
  it("the template names two agents, two people of every group the fixtures bind, an outsider, an operator and another organization's identity", () => {
    const t = tokensTemplate();
    expect(t.agents).toHaveLength(2);
    expect(Object.keys(t.groups).sort()).toEqual(requiredGroups());
    expect(requiredGroups()).toEqual(
      expect.arrayContaining(["editor", "finance-approver", "legal-reviewer"]),
    );
    for (const members of Object.values(t.groups)) expect(members).toHaveLength(2);
    expect(Object.keys(t).sort()).toEqual(["agents", "groups", "operator", "otherOrg", "outsider", "people"]);
  });

  it("the template as written is refused: its tokens are placeholders", () => {
    const parsed = parseTokensFile(JSON.stringify(tokensTemplate()));
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problems).toContain("operator.token is still the template's placeholder");
  });

  it("every problem at once, by its path", () => {
    const t = filled() as unknown as Record<string, unknown>;
    t.agents = [{ id: "a", token: "x" }];
    delete t.outsider;
    (t.groups as Record<string, unknown>).editor = [
      { id: "e", token: "" },
      { id: "f", token: "y" },
    ];
    const parsed = parseTokensFile(JSON.stringify(t));
    expect(!parsed.ok && parsed.problems).toEqual([
      "agents must list two agent identities",
      'outsider must be { "id": "…", "token": "…" }',
      'groups.editor[0] must be { "id": "…", "token": "…" }',
    ]);
    expect(parseTokensFile("{")).toMatchObject({ ok: false, problems: [expect.stringMatching(/^not JSON/)] });
    expect(parseTokensFile("[]")).toEqual({ ok: false, problems: ["not a JSON object"] });
  });

  it("an identity named twice in different roles is refused", () => {
    const t = filled();
    t.outsider = { ...t.operator };
    expect(parseTokensFile(JSON.stringify(t))).toEqual({
      ok: false,
      problems: ["operator and outsider are the same identity operator@example.com"],
    });
  });

  it("identities map afresh per check: agents in order of first use, a group's people, the outsider, the operator, another organization; what the file cannot give is a reason", () => {
    const slots = new TokenSlots(filled());
    const pick = (test: string, who: Parameters<TokenSlots["pick"]>[1]) => {
      const p = slots.pick(test, who);
      return "token" in p ? p.id : p.reason;
    };
    expect(pick("t1", { kind: "agent", id: "a_x" })).toBe("agent-1");
    expect(pick("t1", { kind: "agent", id: "a_y" })).toBe("agent-2");
    expect(pick("t1", { kind: "agent", id: "a_x" })).toBe("agent-1");
    expect(pick("t1", { kind: "agent", id: "a_z" })).toBe(
      "acts as more agents than the tokens file names (2)",
    );
    expect(pick("t1", { kind: "person", id: "e1", groups: ["editor"] })).toBe("editor-1@example.com");
    expect(pick("t1", { kind: "person", id: "e2", groups: ["editor"] })).toBe("editor-2@example.com");
    expect(pick("t1", { kind: "person", id: "o", groups: [] })).toBe("outsider@example.com");
    expect(pick("t1", { kind: "person", id: "op", operator: true })).toBe("operator@example.com");
    expect(pick("t1", { kind: "agent", id: "a_o", org: "elsewhere" })).toBe("other-org-agent");
    expect(pick("t1", { kind: "person", id: "l", groups: ["ops-leads", "sec-leads"] })).toMatch(
      /several groups/,
    );
    // A group the file does not name is bound to no role: its member counts as a person in no group.
    expect(pick("t1", { kind: "person", id: "g", groups: ["sales"] })).toBe("person-1@example.com");
    // The next check starts afresh.
    expect(pick("t2", { kind: "agent", id: "a_z" })).toBe("agent-1");
  });

  it("ids translate both ways within a check: a person named in arguments before acting is mapped then, as a person in no group; a person whose groups change within a check is a reason", () => {
    const slots = new TokenSlots(filled());
    expect(slots.idToServer("t1", "manager@example.com")).toBe("outsider@example.com");
    expect(slots.idToServer("t1", "not an id")).toBe("not an id");
    const manager = slots.pick("t1", { kind: "person", id: "manager@example.com" });
    expect("token" in manager && manager.id).toBe("outsider@example.com");
    const editor = slots.pick("t1", { kind: "person", id: "edna@example.com", groups: ["editor"] });
    expect("token" in editor && editor.id).toBe("editor-1@example.com");
    expect(slots.idFromServer("t1", "editor-1@example.com")).toBe("edna@example.com");
    expect(slots.idToServer("t1", "edna@example.com")).toBe("editor-1@example.com");
    expect(slots.idFromServer("t1", "someone-else@example.com")).toBe("someone-else@example.com");
    expect(slots.pick("t1", { kind: "person", id: "edna@example.com", groups: [] })).toEqual({
      reason:
        "acts as edna@example.com with different groups or roles within one check (a person joining or leaving a group), which a tokens file cannot",
    });
    // Another check: nothing carries over.
    expect(slots.idFromServer("t2", "editor-1@example.com")).toBe("editor-1@example.com");
    expect(slots.idToServer("t2", "p1@example.com")).toBe("outsider@example.com");
    expect(slots.idToServer("t2", "p2@example.com")).toBe("person-1@example.com");
  });
});
