import { describe, expect, it } from "vitest";
import { decodeProcessFile } from "./decode.ts";
import { parseProcess } from "./parse.ts";

const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...Buffer.from(p, "utf8")] : p)));

const DOC = "---\nname: t\ndescription: T.\nsteps:\n  - id: done\n    finish: ok\n---\n";

describe("decodeProcessFile: the file is UTF-8 text, never silently repaired (§2.1; §6 rule 5 'exactly as written')", () => {
  it("reads UTF-8, keeping a leading BOM for parseProcess to drop, so the hash is the one of the text as written", () => {
    const decoded = decodeProcessFile(bytes([0xef, 0xbb, 0xbf], DOC, "Café ☕ 😀\r\n"));
    expect(decoded).toEqual({ ok: true, text: `\uFEFF${DOC}Café ☕ 😀\r\n` });
    const parsed = decoded.ok ? parseProcess(decoded.text) : null;
    expect(parsed?.ok && parsed.process.body).toBe("Café ☕ 😀\r\n");
  });

  it.each([
    ["a byte that begins nothing, in the body", bytes(DOC, "bad ", [0xff], " byte"), 8, 5, "0xFF", 71],
    [
      "Latin-1 text in the frontmatter",
      bytes("---\nname: t\ndescription: caf", [0xe9], "\n"),
      3,
      17,
      "0xE9",
      28,
    ],
    ["a sequence cut off at the end of the file", bytes("ab", [0xe2, 0x82]), 1, 3, "0xE2", 2],
    ["an overlong encoding at the start", bytes([0xc0, 0x80]), 1, 1, "0xC0", 0],
    [
      "a stray continuation byte after a BOM and an astral character",
      bytes([0xef, 0xbb, 0xbf], "x\n😀", [0x80]),
      2,
      3,
      "0x80",
      9,
    ],
    ["an encoded surrogate (CESU-8)", bytes("ok\n", [0xed, 0xa0, 0x80]), 2, 1, "0xED", 3],
  ])(
    "refuses %s at its line and column (UTF-16 columns, as every position)",
    (_, input, line, col, byte, offset) => {
      expect(decodeProcessFile(input)).toEqual({
        ok: false,
        issues: [
          {
            line,
            col,
            message: `the file is not UTF-8 text: the byte ${byte} at offset ${offset} does not begin a readable character; save the file as UTF-8`,
          },
        ],
      });
    },
  );

  it("an empty file is text (and then parseProcess says what is missing)", () => {
    expect(decodeProcessFile(new Uint8Array())).toEqual({ ok: true, text: "" });
  });
});
