import { LineIndex } from "./position.ts";
import type { Issue } from "./types.ts";

/** The result of {@link decodeProcessFile}: the file's text, or the one issue that stops reading it. */
export type Decoded = { ok: true; text: string } | { ok: false; issues: Issue[] };

const BOM = "\uFEFF";

/** True when `bytes` is valid UTF-8 so far: a sequence cut off at the end is not yet an error. */
function validPrefix(bytes: Uint8Array): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads a PROCESS.md file's bytes as UTF-8 (§2.1: the file is text), keeping a leading BOM for
 * {@link parseProcess} to drop. A byte that is not UTF-8 is refused with an issue at its line and
 * column, never replaced: the content hash covers "the body text exactly as written" (§6 rule 5), and
 * a replacement character would make it cover a text the author never wrote.
 *
 * The first bad byte is found by bisecting with the standard decoder (a prefix that decodes leaves
 * every shorter prefix decodable), so no UTF-8 rule is written here; about 20 decodes for 1 MB.
 */
export function decodeProcessFile(bytes: Uint8Array): Decoded {
  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  try {
    return { ok: true, text: strict.decode(bytes) };
  } catch {
    // Bisect for the longest prefix that still decodes.
  }
  // Bisect for the longest prefix that decodes as a stream (a sequence cut off at its end waits).
  let good = 0;
  let bad = bytes.length + 1;
  while (bad - good > 1) {
    const mid = (good + bad) >> 1;
    if (validPrefix(bytes.subarray(0, mid))) good = mid;
    else bad = mid;
  }
  // The decoded prefix holds every complete character before the broken sequence, which starts at
  // byte `start` (a lead byte whose continuation is missing or wrong, or a byte that leads nothing).
  const withBom = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes.subarray(0, good), {
    stream: true,
  });
  const start = new TextEncoder().encode(withBom).length;
  const prefix = withBom.startsWith(BOM) ? withBom.slice(1) : withBom;
  const at = new LineIndex(prefix).at(prefix.length);
  const byte = (bytes[start] ?? 0).toString(16).toUpperCase().padStart(2, "0");
  return {
    ok: false,
    issues: [
      {
        ...at,
        message: `the file is not UTF-8 text: the byte 0x${byte} at offset ${start} does not begin a readable character; save the file as UTF-8`,
      },
    ],
  };
}
