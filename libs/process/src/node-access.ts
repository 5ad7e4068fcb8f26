/** Small helpers over the located YAML tree, shared by the validators. */

import { clipMessage } from "./issue-limits.ts";
import type { Position } from "./position.ts";
import type { Issue } from "./types.ts";
import type { LEntry, LMap, LNode, LSeq } from "./yaml-tree.ts";

/**
 * Collects issues; `add` takes the position the message is about. Messages are clipped to
 * `MAX_MESSAGE` characters here, so a message that quotes a long key stays small in memory too.
 */
export class Issues {
  readonly list: Issue[] = [];

  add(at: Position, message: string): void {
    this.list.push({ line: at.line, col: at.col, message: clipMessage(message) });
  }

  get count(): number {
    return this.list.length;
  }
}

/** True for a mapping node. */
export const isMap = (n: LNode | undefined): n is LMap => n?.kind === "map";
/** True for a list node. */
export const isSeq = (n: LNode | undefined): n is LSeq => n?.kind === "seq";
/** True for a node already reported as unreadable; validators skip it so nothing cascades. */
export const isBad = (n: LNode | undefined): boolean => n?.kind === "bad";

/** The string value of a scalar node, or null. */
export function textOf(n: LNode | undefined): string | null {
  return n?.kind === "scalar" && typeof n.value === "string" ? n.value : null;
}

/** The number value of a scalar node, or null. */
export function numberOf(n: LNode | undefined): number | null {
  return n?.kind === "scalar" && typeof n.value === "number" ? n.value : null;
}

/** True for a string with something other than whitespace in it. */
export const isNonBlank = (s: string | null): s is string => s !== null && s.trim().length > 0;

/** The entries of a map by key (the reader already dropped duplicate keys). */
export function entriesOf(map: LMap): Map<string, LEntry> {
  return new Map(map.entries.map((e) => [e.key, e]));
}
