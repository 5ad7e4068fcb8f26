// Numbers exactly as typed (§2.3: a server never rounds; neither does the console on the way).

const MARK = "\u0000number:";
const MARK_END = "\u0000";
/** JSON's number grammar (RFC 8259 §6). */
export const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
// JSON.stringify writes the marker characters as \u0000 escapes.
const MARKED = /"\\u0000number:(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)\\u0000"/g;

/**
 * A number exactly as the person typed it. JavaScript would round `0.1000000000000000055511` or
 * `12345678901234567890` on its way to JSON; this keeps the text, and {@link writeExactNumbers}
 * puts it into the request body as the number it is, so the server accepts it or says why not.
 */
export class ExactNumber {
  constructor(readonly text: string) {
    if (!JSON_NUMBER.test(text)) throw new Error(`${text} is not a JSON number`);
  }
  toJSON(): string {
    return `${MARK}${this.text}${MARK_END}`;
  }
}

/** A JSON text with every serialized {@link ExactNumber} written as its number. */
export function writeExactNumbers(json: string): string {
  return json.includes("\\u0000number:") ? json.replace(MARKED, "$1") : json;
}
