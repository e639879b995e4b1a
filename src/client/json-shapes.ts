/**
 * The shapes of the last few JSON values a full scan read (json-scan.ts), so that the next value
 * of the same shape is read by comparing bytes instead of walking the grammar (issue 24 item 3).
 *
 * A shape is one validated value's bytes with its strings and numbers cut out as holes: what is
 * left is its structure, its keys and its literals (`null`, `true`, `false`). A server's token
 * chunks all have one shape (a new id, text and counts each time, the same keys in the same order),
 * whichever stream they belong to. A value matches a shape when its bytes between the holes are
 * the shape's, byte for byte, and each hole holds one whole token of the hole's kind (a string or a
 * number, as json-tokens.ts defines them). Then it is valid JSON with the same tree as the shape's,
 * and each planned field is where the shape says, its hole's bytes moved to where they are now.
 *
 * A value that matches no shape gets a full scan, and its shape replaces the one used least
 * recently. Nothing is allocated on a match. (Measured too, on the 2-core VM: a latin1 string of
 * the value compared with `startsWith`, slower, 1.2 against 0.8 µs a vLLM chunk; and a compare
 * four bytes at a time through a DataView of the chunk, 20–30 % faster in a loop over the same
 * chunks but 0.4 µs slower per event in the live client, 7 of 9 paired runs, where each chunk is
 * a new buffer and so a new DataView.)
 */
import { NUMBER, STRING, numberEnd, stringEnd } from './json-tokens.js';

/** holes one shape may have; a value with more is not kept as a shape */
export const MAX_HOLES = 64;

interface Shape {
  /** the value's bytes (a Buffer: its loads are faster than a plain Uint8Array's, measured) */
  bytes: Buffer;
  /** per hole: start and end in `bytes`, and its type (STRING or NUMBER) */
  holes: Int32Array;
  /** the scanner's fields as the full scan left them, with each string or number field's hole number in its 4th entry */
  fields: Int32Array;
  /** the last match (or learning), for the least recently used */
  used: number;
}

export class ShapeMemo {
  private readonly shapes: Shape[] = [];
  private clock = 0;
  /** where each hole of the last match is in its bytes: start, end */
  private readonly moved = new Int32Array(MAX_HOLES * 2);

  constructor(private readonly capacity: number) {}

  /**
   * Does bytes [start, end) match a kept shape? Then `fields` gets that shape's fields, with the
   * string and number fields pointing into `bytes`.
   */
  match(b: Uint8Array, start: number, end: number, fields: Int32Array): boolean {
    const shapes = this.shapes;
    for (let i = 0; i < shapes.length; i++) {
      const shape = shapes[i]!;
      if (this.matches(shape, b, start, end)) {
        shape.used = ++this.clock;
        // the shape matched last is tried first next time: a stream's first chunk (the role delta)
        // is learned first, and every token chunk after it would be compared with it in vain
        if (i > 0) {
          shapes.copyWithin(1, 0, i);
          shapes[0] = shape;
        }
        this.place(shape, fields);
        return true;
      }
    }
    return false;
  }

  /**
   * Keep the shape of bytes [start, end), a value the full scan has just read: its holes (start,
   * end, type; positions in `b`) and its fields (string and number fields holding their hole
   * number in the 4th entry).
   */
  learn(b: Uint8Array, start: number, end: number, holes: Int32Array, holeCount: number, fields: Int32Array): void {
    if (this.capacity === 0 || holeCount > MAX_HOLES) return;
    const shape: Shape = {
      bytes: Buffer.from(b.subarray(start, end)),
      holes: new Int32Array(holeCount * 3),
      fields: fields.slice(),
      used: ++this.clock,
    };
    for (let h = 0; h < holeCount; h++) {
      shape.holes[h * 3] = holes[h * 3]! - start;
      shape.holes[h * 3 + 1] = holes[h * 3 + 1]! - start;
      shape.holes[h * 3 + 2] = holes[h * 3 + 2]!;
    }
    if (this.shapes.length < this.capacity) {
      this.shapes.push(shape);
      return;
    }
    let oldest = 0;
    for (let i = 1; i < this.shapes.length; i++) if (this.shapes[i]!.used < this.shapes[oldest]!.used) oldest = i;
    this.shapes[oldest] = shape;
  }

  /** the bytes between the holes are the shape's, and each hole holds one token of its kind; `moved` gets the holes */
  private matches(shape: Shape, b: Uint8Array, start: number, end: number): boolean {
    const t = shape.bytes;
    const holes = shape.holes;
    const moved = this.moved;
    const n = holes.length;
    let pt = 0;
    let p = start;
    for (let h = 0, m = 0; h < n; h += 3, m += 2) {
      const hs = holes[h]!;
      if (p + (hs - pt) > end) return false;
      while (pt < hs) if (t[pt++] !== b[p++]) return false;
      const q = holes[h + 2] === STRING ? (b[p] === 0x22 ? stringEnd(b, p, end) : -1) : numberEnd(b, p, end);
      if (q < 0) return false;
      moved[m] = p;
      moved[m + 1] = q;
      p = q;
      pt = holes[h + 1]!;
    }
    const tn = t.length;
    if (end - p !== tn - pt) return false;
    while (pt < tn) if (t[pt++] !== b[p++]) return false;
    return true;
  }

  /** the shape's fields into `fields`, strings and numbers where the last match found their holes */
  private place(shape: Shape, fields: Int32Array): void {
    fields.set(shape.fields);
    const n = fields.length;
    const moved = this.moved;
    for (let i = 0; i < n; i += 4) {
      const type = fields[i];
      if (type !== STRING && type !== NUMBER) {
        // the shape's own positions would be wrong here: an object's or a literal's bytes are not read
        fields[i + 1] = -1;
        fields[i + 2] = -1;
        continue;
      }
      const hole = fields[i + 3]!;
      fields[i + 1] = moved[hole * 2]!;
      fields[i + 2] = moved[hole * 2 + 1]!;
    }
  }
}

