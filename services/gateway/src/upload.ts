import type { UploadArgs } from "@baton/protocol";

/** RFC 9110 §5.6.2 `token`: what a media type's type, subtype and parameter names are made of. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** RFC 9110 §5.6.4 `quoted-string` (printable ASCII, tabs and obs-text; `\"` and `\\` escaped). */
const QUOTED = '"(?:[\\t !#-\\[\\]-~\\x80-\\xff]|\\\\[\\t -~\\x80-\\xff])*"';
/** RFC 9110 §8.3.1: `type "/" subtype *( OWS ";" OWS parameter )`. */
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`);

/** Whether `value` is a valid media type with optional parameters (RFC 9110 §8.3.1), e.g. `text/plain; charset=utf-8`. */
export function isMediaType(value: string): boolean {
  return MEDIA_TYPE.test(value);
}

/**
 * The problems of an upload's `fileName` (issue #10): a name, not a path (no `/` or `\`, not `.` or
 * `..`), without control characters (C0, DEL, C1), which would break the download's
 * `Content-Disposition` and any folder a person saves it to.
 */
export function fileNameProblems(name: string): string[] {
  const problems: string[] = [];
  if (/[/\\]/.test(name))
    problems.push("fileName: contains a path separator (/ or \\); send the file's own name, without folders");
  if (name === "." || name === "..") problems.push(`fileName: "${name}" is not a file name`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name))
    problems.push("fileName: contains a control character (a line break, tab or other); remove it");
  return problems;
}

/**
 * The decoded size of a base64 text (without whitespace), bytes, computed from its length alone so
 * the limit is checked before the bytes are held in memory whole.
 */
export function decodedLength(text: string): number {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const whole = Math.floor(text.length / 4) * 3;
  const rest = text.length % 4;
  // Unpadded base64 ends in 2 or 3 characters for 1 or 2 bytes.
  return whole - padding + (rest === 0 ? 0 : rest - 1);
}

/** An upload that passed every check: its bytes, decoded. */
export type CheckedUpload = { ok: true; bytes: Buffer } | { ok: false; issues: string[] };

/**
 * Checks an `upload`'s arguments after their schema (tools.md upload, issue #10) and decodes the
 * bytes. Every problem is listed at once, as `invalid` issues, and nothing is stored for any of them:
 *
 * - `fileName`: see {@link fileNameProblems};
 * - `contentType`: a valid media type (RFC 9110 §8.3.1), such as `application/pdf`;
 * - `contentBase64`: base64 text (whitespace ignored) of at least one byte and at most
 *   `maxUploadBytes` (describe.maxUploadBytes), the size taken from the text's length before decoding.
 */
export function checkUpload(
  args: Pick<UploadArgs, "fileName" | "contentType" | "contentBase64">,
  maxUploadBytes: number,
): CheckedUpload {
  const issues = fileNameProblems(args.fileName);
  if (!isMediaType(args.contentType))
    issues.push(
      `contentType: "${args.contentType}" is not a media type; use type/subtype, such as application/pdf or text/plain`,
    );
  const text = /\s/.test(args.contentBase64) ? args.contentBase64.replace(/\s+/g, "") : args.contentBase64;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) {
    issues.push("contentBase64: not valid base64");
    return { ok: false, issues };
  }
  const size = decodedLength(text);
  if (size === 0) issues.push("contentBase64: the file is empty; upload at least one byte");
  if (size > maxUploadBytes)
    issues.push(`contentBase64: ${size} bytes, over describe.maxUploadBytes (${maxUploadBytes})`);
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, bytes: Buffer.from(text, "base64") };
}
