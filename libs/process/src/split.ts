/**
 * Splitting PROCESS.md into frontmatter and body (specification §2; ARCHITECTURE "Contracts fixed
 * now"): one leading UTF-8 BOM is dropped; the first line is exactly `---`; the frontmatter ends at
 * the next line that is exactly `---`; a delimiter line may end in `\r`. The body is everything
 * after the closing delimiter's line ending, byte for byte.
 */

/** The parts of a file, with offsets into `text` (the file without its BOM). */
export interface SplitFile {
  /** The file without a leading BOM; every offset below is into this text. */
  text: string;
  /** The frontmatter text, excluding both delimiter lines (it keeps its last line ending). */
  frontmatter: string;
  /** Offset of the frontmatter's first character. */
  frontmatterOffset: number;
  /** Offset of the closing delimiter line. */
  closingOffset: number;
  body: string;
}

/** Why a file could not be split: the message and the offset it refers to. */
export interface SplitProblem {
  text: string;
  offset: number;
  message: string;
}

const isDelimiter = (line: string) => line === "---" || line === "---\r";

/** Splits a file; never throws. */
export function splitFile(
  input: string,
): { ok: true; file: SplitFile } | { ok: false; problem: SplitProblem } {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const firstEnd = text.indexOf("\n");
  const first = firstEnd === -1 ? text : text.slice(0, firstEnd);
  if (!isDelimiter(first)) {
    return {
      ok: false,
      problem: { text, offset: 0, message: 'frontmatter: the file must start with a line "---"' },
    };
  }
  if (firstEnd !== -1) {
    let start = firstEnd + 1;
    for (;;) {
      const end = text.indexOf("\n", start);
      const line = end === -1 ? text.slice(start) : text.slice(start, end);
      if (isDelimiter(line)) {
        return {
          ok: true,
          file: {
            text,
            frontmatter: text.slice(firstEnd + 1, start),
            frontmatterOffset: firstEnd + 1,
            closingOffset: start,
            body: end === -1 ? "" : text.slice(end + 1),
          },
        };
      }
      if (end === -1) break;
      start = end + 1;
    }
  }
  return {
    ok: false,
    problem: {
      text,
      offset: 0,
      message: 'frontmatter: no closing "---" line; end the frontmatter with a line "---"',
    },
  };
}
