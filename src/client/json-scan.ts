/**
 * Reads a few fields of one JSON value straight from its UTF-8 bytes, without building the value
 * (issue 24 item 3: JSON.parse of every token event cost the client about 3 µs of its CPU per
 * event at 1,024 streams, for two or three fields out of a dozen).
 *
 * A plan names the fields by path (`['usage', 'completion_tokens']`, `['choices', 0, 'delta']`:
 * object keys, and array index 0). `scan` checks every byte of the value against the JSON grammar
 * (RFC 8259; the tokens in json-tokens.ts), so it says yes only where JSON.parse would have parsed
 * the same text, and it notes each planned field: its type, where its bytes are, and for an array
 * its element count. A value of the same shape as one read before (json-shapes.ts: the same bytes
 * but for its strings and numbers) is checked by comparing bytes; any other gets the full walk.
 * It says no, and the caller parses the text instead, at anything it does not read exactly:
 * - anything JSON.parse would refuse (the caller's JSON.parse then reports the error);
 * - a planned key twice in one object (JSON.parse keeps the last; rare enough not to follow);
 * - bytes of 0x80 and up outside strings (the caller decodes the text first, where such a byte
 *   becomes U+FFFD and fails JSON.parse; no yes for those either);
 * - nesting deeper than MAX_DEPTH.
 * A key written with escapes (`"con\u0074ent"`, `content` to JSON.parse) is decoded and matched
 * as JSON.parse would (rare; the one allocation of a full walk).
 *
 * Nothing is allocated per value read: the results are typed-array slots, one per plan node, read
 * with the helpers below (a string's text or a number only when asked for).
 */
import { MAX_HOLES, ShapeMemo } from './json-shapes.js';
import {
  ABSENT,
  ARRAY,
  FALSE,
  NULL,
  NUMBER,
  OBJECT,
  QUOTE,
  STRING,
  TRUE,
  numberEnd,
  numberValue,
  stringEnd,
  stringHadEscape,
  stringText,
  wordEnd,
  wsEnd,
} from './json-tokens.js';

export { ABSENT, ARRAY, FALSE, NULL, NUMBER, OBJECT, STRING, TRUE } from './json-tokens.js';

/** nesting the scan follows; deeper values get a no (JSON.parse takes them) */
export const MAX_DEPTH = 64;

/** one step of a path: an object key, or array index 0 */
export type PathStep = string | 0;

interface PlanKey {
  bytes: Uint8Array;
  text: string;
  node: PlanNode;
}

interface PlanNode {
  slot: number;
  /** object keys → child nodes, each key as UTF-8 bytes and as text */
  keys: PlanKey[];
  /** the same keys by their length in bytes (the first test of a key met in the text) */
  byLength: (PlanKey[] | undefined)[];
  /** the node of element 0 when this is an array */
  first: PlanNode | undefined;
}

/** A compiled set of paths; each path's node (and each prefix of it) has a slot. */
export class ScanPlan {
  readonly root: PlanNode = { slot: 0, keys: [], byLength: [], first: undefined };
  /** slots in all, the root's (0) included */
  size = 1;

  constructor(paths: readonly (readonly PathStep[])[]) {
    for (const path of paths) {
      let node = this.root;
      for (const step of path) node = this.step(node, step) ?? this.add(node, step);
    }
  }

  /** the slot of a planned path, or of a prefix of one ([] is the root: 0) */
  slotOf(path: readonly PathStep[]): number {
    let node = this.root;
    for (const step of path) {
      const next = this.step(node, step);
      if (next === undefined) throw new Error(`ScanPlan: ${JSON.stringify(path)} is not a planned path`);
      node = next;
    }
    return node.slot;
  }

  private step(node: PlanNode, step: PathStep): PlanNode | undefined {
    if (step === 0) return node.first;
    return node.keys.find((k) => k.text === step)?.node;
  }

  private add(node: PlanNode, step: PathStep): PlanNode {
    const next: PlanNode = { slot: this.size++, keys: [], byLength: [], first: undefined };
    if (step === 0) {
      node.first = next;
    } else {
      const key: PlanKey = { bytes: Buffer.from(step, 'utf8'), text: step, node: next };
      node.keys.push(key);
      (node.byLength[key.bytes.length] ??= []).push(key);
    }
    return next;
  }
}

export interface ScannerOptions {
  /** shapes kept for the byte compare (json-shapes.ts); 0: a full walk every time. Default 4. */
  shapes?: number;
}

/** Scans JSON values against one plan; reuse it (its slots are overwritten by each scan). */
export class JsonFieldScanner {
  /**
   * per slot: type, start byte, end byte (exclusive), element count (arrays) or hole number
   * (strings, numbers). Start and end are for strings and numbers (what text() and number() read);
   * a value read by a shape match has -1 there for other types.
   */
  readonly fields: Int32Array;
  private readonly memo: ShapeMemo;
  /** the full walk's strings and numbers: start, end, type */
  private readonly holes = new Int32Array(MAX_HOLES * 3);
  private holeCount = 0;
  private b: Uint8Array = new Uint8Array(0);
  private p = 0;
  private e = 0;

  constructor(
    private readonly plan: ScanPlan,
    options: ScannerOptions = {},
  ) {
    this.fields = new Int32Array(plan.size * 4);
    this.memo = new ShapeMemo(options.shapes ?? 4);
  }

  /** true when bytes [start, end) are one JSON value (JSON whitespace around it allowed) read exactly */
  scan(bytes: Uint8Array, start: number, end: number): boolean {
    this.b = bytes;
    if (this.memo.match(bytes, start, end, this.fields)) return true;
    this.fields.fill(0);
    this.holeCount = 0;
    this.e = end;
    this.p = wsEnd(bytes, start, end);
    if (!this.value(this.plan.root, 0)) return false;
    this.p = wsEnd(bytes, this.p, end);
    if (this.p !== end) return false;
    this.memo.learn(bytes, start, end, this.holes, this.holeCount, this.fields);
    return true;
  }

  /** the type of a planned field (ABSENT … ARRAY) */
  type(slot: number): number {
    return this.fields[slot * 4]!;
  }

  /** elements of a planned array field */
  count(slot: number): number {
    return this.fields[slot * 4 + 3]!;
  }

  /** a planned string field is non-empty (its text is at least one character) */
  nonEmptyString(slot: number): boolean {
    const f = this.fields;
    return f[slot * 4] === STRING && f[slot * 4 + 2]! - f[slot * 4 + 1]! > 2;
  }

  /** a planned string field's bytes between its quotes equal `ascii` (no escapes) */
  stringIs(slot: number, ascii: string): boolean {
    const f = this.fields;
    if (f[slot * 4] !== STRING) return false;
    const s = f[slot * 4 + 1]! + 1;
    const n = f[slot * 4 + 2]! - 1 - s;
    if (n !== ascii.length) return false;
    for (let i = 0; i < n; i++) if (this.b[s + i] !== ascii.charCodeAt(i)) return false;
    return true;
  }

  /** a planned string field's text, as JSON.parse gives it */
  text(slot: number): string {
    return stringText(this.b, this.fields[slot * 4 + 1]!, this.fields[slot * 4 + 2]!);
  }

  /** a planned number field's value, as JSON.parse gives it (Infinity for one out of range) */
  number(slot: number): number {
    return numberValue(this.b, this.fields[slot * 4 + 1]!, this.fields[slot * 4 + 2]!);
  }

  /** one value at this.p; notes it in `node`'s slot when planned */
  private value(node: PlanNode | undefined, depth: number): boolean {
    const b = this.b;
    const start = this.p;
    if (start >= this.e) return false;
    const c = b[start]!;
    let type: number;
    let extra = 0;
    if (c === 0x7b) {
      if (depth >= MAX_DEPTH || !this.object(node, depth + 1)) return false;
      type = OBJECT;
    } else if (c === 0x5b) {
      if (depth >= MAX_DEPTH) return false;
      extra = this.array(node, depth + 1);
      if (extra < 0) return false;
      type = ARRAY;
    } else {
      let end: number;
      if (c === QUOTE) {
        type = STRING;
        end = stringEnd(b, start, this.e);
      } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        type = NUMBER;
        end = numberEnd(b, start, this.e);
      } else {
        type = c === 0x74 ? TRUE : c === 0x66 ? FALSE : c === 0x6e ? NULL : ABSENT;
        end = type === ABSENT ? -1 : wordEnd(b, start, this.e, type === TRUE ? 'true' : type === FALSE ? 'false' : 'null');
      }
      if (end < 0) return false;
      this.p = end;
      if (type === STRING || type === NUMBER) {
        // a hole of this value's shape (json-shapes.ts)
        const h = this.holeCount++;
        if (h < MAX_HOLES) {
          this.holes[h * 3] = start;
          this.holes[h * 3 + 1] = end;
          this.holes[h * 3 + 2] = type;
        }
        extra = h;
      }
    }
    if (node !== undefined) {
      const i = node.slot * 4;
      this.fields[i] = type;
      this.fields[i + 1] = start;
      this.fields[i + 2] = this.p;
      this.fields[i + 3] = extra;
    }
    return true;
  }

  private object(node: PlanNode | undefined, depth: number): boolean {
    const b = this.b;
    const e = this.e;
    this.p = wsEnd(b, this.p + 1, e);
    if (this.p < e && b[this.p] === 0x7d) {
      this.p++;
      return true;
    }
    for (;;) {
      const keyStart = this.p;
      if (keyStart >= e || b[keyStart] !== QUOTE) return false;
      const keyEnd = stringEnd(b, keyStart, e);
      if (keyEnd < 0) return false;
      let child: PlanNode | undefined;
      if (node !== undefined && node.keys.length > 0) {
        child = stringHadEscape ? this.escapedChild(node, keyStart, keyEnd) : this.child(node, keyStart + 1, keyEnd - 1);
        // a planned key twice: JSON.parse keeps the last
        if (child !== undefined && this.fields[child.slot * 4] !== ABSENT) return false;
      }
      this.p = wsEnd(b, keyEnd, e);
      if (this.p >= e || b[this.p] !== 0x3a) return false;
      this.p = wsEnd(b, this.p + 1, e);
      if (!this.value(child, depth)) return false;
      this.p = wsEnd(b, this.p, e);
      if (this.p >= e) return false;
      const c = b[this.p++];
      if (c === 0x7d) return true;
      if (c !== 0x2c) return false;
      this.p = wsEnd(b, this.p, e);
    }
  }

  /** the elements; their count, or -1 */
  private array(node: PlanNode | undefined, depth: number): number {
    const b = this.b;
    const e = this.e;
    this.p = wsEnd(b, this.p + 1, e);
    if (this.p < e && b[this.p] === 0x5d) {
      this.p++;
      return 0;
    }
    let n = 0;
    for (;;) {
      if (!this.value(n === 0 ? node?.first : undefined, depth)) return -1;
      n++;
      this.p = wsEnd(b, this.p, e);
      if (this.p >= e) return -1;
      const c = b[this.p++];
      if (c === 0x5d) return n;
      if (c !== 0x2c) return -1;
      this.p = wsEnd(b, this.p, e);
    }
  }

  /** the planned child whose key is bytes [s, e) (no escapes), if any */
  private child(node: PlanNode, s: number, e: number): PlanNode | undefined {
    const candidates = node.byLength[e - s];
    if (candidates === undefined) return undefined;
    const b = this.b;
    const n = e - s;
    for (let c = 0; c < candidates.length; c++) {
      const kb = candidates[c]!.bytes;
      let i = 0;
      while (i < n && kb[i] === b[s + i]) i++;
      if (i === n) return candidates[c]!.node;
    }
    return undefined;
  }

  /** the planned child whose key is the escaped JSON string at bytes [s, e) (its quotes included), if any */
  private escapedChild(node: PlanNode, s: number, e: number): PlanNode | undefined {
    const key = stringText(this.b, s, e);
    return node.keys.find((k) => k.text === key)?.node;
  }
}
