/** A 1-based position in a PROCESS.md file. */
export interface Position {
  line: number;
  col: number;
}

/**
 * Maps character offsets of a file (after a dropped BOM) to 1-based line and column. Lines end at
 * `\n` (so `\r\n` counts once); columns count UTF-16 code units, as JavaScript strings and the
 * Language Server Protocol do. A dropped BOM changes no line and no column an editor shows after
 * line 1, and on line 1 it is not counted.
 */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.starts.push(i + 1);
  }

  /** The position of `offset`; offsets past the end map to the last line. */
  at(offset: number): Position {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - (this.starts[lo] as number) + 1 };
  }
}
