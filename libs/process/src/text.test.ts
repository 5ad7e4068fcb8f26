import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { showUnstorable, textProblem, unstorableAt, unstorableCharacters } from "./text.ts";

/** What PostgreSQL and UTF-8 hashing keep exactly: a UTF-8 round trip changes nothing, and no NUL. */
const storable = (s: string) => Buffer.from(s, "utf8").toString("utf8") === s && !s.includes("\u0000");

/** Any UTF-16 string, lone surrogates and NUL included. */
const anyText = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) });

describe("text Baton can store exactly (issue #8)", () => {
  it("unstorableAt finds exactly the strings UTF-8 or PostgreSQL would change or refuse, and the first such character", () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const at = unstorableAt(s);
        expect(at === -1).toBe(storable(s));
        if (at !== -1) {
          expect(storable(s.slice(0, at))).toBe(true);
          expect(storable(s.slice(0, at + 1))).toBe(false);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("textProblem names the character and where it is; well-formed text, astral characters included, has none", () => {
    expect(textProblem("https://example.com/\ud800")).toBe(
      "contains a lone surrogate (\\ud800) at character 21, which has no UTF-8 form, so it can be neither hashed nor stored; send well-formed Unicode (a surrogate only as half of a pair)",
    );
    expect(textProblem("a\nbc\u0000", true)).toBe(
      "key contains NUL (\\u0000) at line 2, column 3, which PostgreSQL cannot store; remove it or send it escaped in your own notation",
    );
    expect(textProblem("\udc00\ud800")).toMatch(/^contains a lone surrogate \(\\udc00\) at character 1,/);
    expect(textProblem("\u{1F600} \u{10FFFF} é \uffff")).toBeNull();
    expect(textProblem("")).toBeNull();
  });

  it("showUnstorable writes what cannot be stored as its JSON escape, and leaves the rest as it is", () => {
    expect(showUnstorable("k\ud800\u{1F600}\u0000")).toBe("k\\ud800\u{1F600}\\u0000");
    fc.assert(
      fc.property(anyText, (s) => {
        const shown = showUnstorable(s);
        expect(storable(shown)).toBe(true);
        if (storable(s)) expect(shown).toBe(s);
      }),
      { numRuns: 1000 },
    );
  });

  it("unstorableCharacters reports the first bad character of each line, in one pass", () => {
    expect(unstorableCharacters("ok\na\u0000b\ud800\n\n\udc00").map((c) => c.index)).toEqual([4, 9]);
    expect(unstorableCharacters("fine\n\u{1F600}")).toEqual([]);
    fc.assert(
      fc.property(anyText, (s) => {
        const lines = s.split("\n");
        expect(unstorableCharacters(s).length).toBe(lines.filter((l) => !storable(l)).length);
      }),
      { numRuns: 1000 },
    );
  });
});
