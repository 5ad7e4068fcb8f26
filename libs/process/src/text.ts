/**
 * Text Baton can store and hash exactly (issue #8; ARCHITECTURE "Contracts fixed now"). Run data,
 * ids and process files are hashed as UTF-8 (canonical JSON, RFC 8785) and kept in PostgreSQL `text`
 * and `jsonb`, so a string must have a UTF-8 form, and PostgreSQL must accept it:
 *
 * - a lone UTF-16 surrogate (`\ud800` not followed by `\udc00`–`\udfff`, or a low half alone) has no
 *   UTF-8 form: hashing would replace it with U+FFFD, so two different strings would hash alike, and
 *   `jsonb` refuses its escape;
 * - NUL (U+0000) is refused by PostgreSQL's `text` and `jsonb` alike.
 *
 * Neither can become storable by waiting, so a request carrying one is `invalid` (§4.3), never `retry`.
 */

/** The index (UTF-16 code units) of the first lone surrogate in `s`, or -1. */
export function loneSurrogateAt(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return i;
    } else if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

/**
 * The index (UTF-16 code units) of the first character of `s` that Baton cannot store exactly (a
 * lone surrogate or NUL), or -1 when it can store all of `s`. Native scans only, unless `s` holds a
 * lone surrogate: cheap enough for every string of every request, megabytes of base64 included.
 */
export function unstorableAt(s: string): number {
  const nul = s.indexOf("\u0000");
  if (s.isWellFormed()) return nul;
  const lone = loneSurrogateAt(s);
  return nul === -1 ? lone : Math.min(nul, lone);
}

/** `\uXXXX` of one UTF-16 code unit, as JSON writes it. */
function escaped(code: number): string {
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

/** What the character at `at` of `s` is, for a message: `a lone surrogate (\ud800)` or `NUL (\u0000)`. */
function whatAt(s: string, at: number): string {
  const code = s.charCodeAt(at);
  return code === 0 ? "NUL (\\u0000)" : `a lone surrogate (${escaped(code)})`;
}

/** Where `at` is in `s`: `character 21`, or `line 3, column 4` when `s` has lines (both 1-based, UTF-16). */
function whereIn(s: string, at: number): string {
  const lineStart = s.lastIndexOf("\n", at - 1) + 1;
  if (lineStart === 0 && !s.includes("\n")) return `character ${at + 1}`;
  let line = 1;
  for (let i = s.indexOf("\n"); i !== -1 && i < at; i = s.indexOf("\n", i + 1)) line++;
  return `line ${line}, column ${at - lineStart + 1}`;
}

/** Why the kind of character at `at` cannot be kept, and what to send instead. */
function because(code: number): string {
  return code === 0
    ? "which PostgreSQL cannot store; remove it or send it escaped in your own notation"
    : "which has no UTF-8 form, so it can be neither hashed nor stored; send well-formed Unicode (a surrogate only as half of a pair)";
}

/**
 * Why Baton cannot store the string `s` exactly, naming the first offending character and where it
 * is (`contains a lone surrogate (\ud800) at character 21, which has no UTF-8 form, …`), or null when
 * it can. `key`: `s` is an object key, so the message says so.
 */
export function textProblem(s: string, key = false): string | null {
  const at = unstorableAt(s);
  if (at === -1) return null;
  return `${key ? "key contains" : "contains"} ${whatAt(s, at)} at ${whereIn(s, at)}, ${because(s.charCodeAt(at))}`;
}

/**
 * The characters of `s` Baton cannot store, as `{ index, problem }` (index in UTF-16 code units): the
 * first on each line that has any, so a file full of NULs gives one issue a line, not one a byte.
 * For positioned reports over a whole file (`parseProcess`). One pass.
 */
export function unstorableCharacters(s: string): { index: number; problem: string }[] {
  if (unstorableAt(s) === -1) return [];
  const out: { index: number; problem: string }[] = [];
  let reported = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10) {
      reported = false;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
    } else if (c !== 0 && (c < 0xdc00 || c > 0xdfff)) continue;
    if (!reported) out.push({ index: i, problem: `contains ${whatAt(s, i)}, ${because(c)}` });
    reported = true;
  }
  return out;
}

/**
 * `s` with every character Baton cannot store written as its JSON escape (`\ud800` as the six
 * characters `\ud800`), so a path or message naming it can itself be stored and shown.
 */
export function showUnstorable(s: string): string {
  if (unstorableAt(s) === -1) return s;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) out += escaped(0);
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += s[i] + (s[i + 1] as string);
        i++;
      } else out += escaped(c);
    } else if (c >= 0xdc00 && c <= 0xdfff) out += escaped(c);
    else out += s[i];
  }
  return out;
}
