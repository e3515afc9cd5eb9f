/**
 * A QR symbol as a 1-bit greyscale PNG, compressed by hand.
 *
 * A QR image is a few dozen distinct pixel rows, each repeated `scale` times. Its zlib stream is
 * written here directly (RFC 1950/1951, one block with the fixed Huffman codes): each distinct row
 * as literal bytes, each run of repeats as one back-reference to the row above. A general PNG
 * encoder runs zlib over every pixel, which costs many times the QR encoding itself, for an image
 * barely smaller (measured in docs/performance.md).
 */
import { crc32 } from 'node:zlib';

/** Fixed Huffman codes (RFC 1951 §3.2.6), bit-reversed because deflate packs codes MSB first. */
const LITERAL_CODE = new Uint16Array(286);
const LITERAL_BITS = new Uint8Array(286);
function reverse(code: number, bits: number): number {
  let r = 0;
  for (let i = 0; i < bits; i++) r |= ((code >> i) & 1) << (bits - 1 - i);
  return r;
}
for (let s = 0; s < 286; s++) {
  const [code, bits] =
    s < 144 ? [0x30 + s, 8] : s < 256 ? [0x190 + s - 144, 9] : s < 280 ? [s - 256, 7] : [0xc0 + s - 280, 8];
  LITERAL_CODE[s] = reverse(code, bits);
  LITERAL_BITS[s] = bits;
}
const LENGTH_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
  227, 258,
];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DISTANCE_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
  6145, 8193, 12289, 16385, 24577,
];
const DISTANCE_EXTRA = [
  0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
];
/** The largest table index whose base is at most `value`. */
const codeFor = (bases: number[], value: number) => {
  let i = bases.length - 1;
  while (bases[i]! > value) i--;
  return i;
};
/** Length code (index into LENGTH_BASE) of each back-reference length 3–258. */
const LENGTH_CODE = Uint8Array.from({ length: 259 }, (_, n) => (n < 3 ? 0 : codeFor(LENGTH_BASE, n)));

/** Deflate's bit order: fields packed from the least significant bit of each byte. */
class BitSink {
  private acc = 0;
  private bits = 0;
  length = 0;
  constructor(readonly bytes: Buffer) {}

  put(value: number, n: number): void {
    this.acc |= value << this.bits;
    this.bits += n;
    while (this.bits >= 8) {
      this.bytes[this.length++] = this.acc & 0xff;
      this.acc >>>= 8;
      this.bits -= 8;
    }
  }

  literal(symbol: number): void {
    this.put(LITERAL_CODE[symbol]!, LITERAL_BITS[symbol]!);
  }

  /** Writes `line` as literal bytes (the hot loop: state kept in locals, two bytes at a time). */
  literals(line: Uint8Array): void {
    const bytes = this.bytes;
    let { acc, bits, length } = this;
    for (let i = 0; i < line.length; i++) {
      const v = line[i]!;
      acc |= LITERAL_CODE[v]! << bits;
      bits += LITERAL_BITS[v]!;
      if (bits >= 16) {
        bytes[length++] = acc & 0xff;
        bytes[length++] = (acc >>> 8) & 0xff;
        acc >>>= 16;
        bits -= 16;
      }
    }
    this.acc = acc;
    this.bits = bits;
    this.length = length;
  }

  /** Copies `length` bytes from `distance` back, in back-references of at most 258 bytes. */
  copy(length: number, distance: number): void {
    const d = codeFor(DISTANCE_BASE, distance);
    const distanceCode = reverse(d, 5);
    while (length > 0) {
      // Never leave a remainder of 1 or 2: the shortest back-reference is 3 bytes.
      let n = Math.min(length, 258);
      if (length - n > 0 && length - n < 3) n = length - 3;
      const l = LENGTH_CODE[n]!;
      this.put(LITERAL_CODE[257 + l]!, LITERAL_BITS[257 + l]!);
      this.put(n - LENGTH_BASE[l]!, LENGTH_EXTRA[l]!);
      this.put(distanceCode, 5);
      this.put(distance - DISTANCE_BASE[d]!, DISTANCE_EXTRA[d]!);
      length -= n;
    }
  }

  /** Pads the last byte with zero bits. */
  flush(): void {
    if (this.bits > 0) this.put(0, 8 - this.bits);
  }
}

function chunk(out: Buffer, at: number, type: string, length: number): number {
  out.writeUInt32BE(length, at);
  out.write(type, at + 4, 'ascii');
  out.writeUInt32BE(crc32(out.subarray(at + 4, at + 8 + length)), at + 8 + length);
  return at + 12 + length;
}

/**
 * A 1-bit greyscale PNG of a QR matrix: rows of modules (true = dark), quiet zone included, as the
 * `qr` package's `raw` output gives them; `scale` (1–16) pixels per module. Every PNG reader handles
 * 1-bit greyscale; it is also the smallest raw image, which keeps the hand-made compression cheap.
 */
export function qrPng(rows: readonly (readonly boolean[])[], scale: number): Buffer {
  if (!Number.isInteger(scale) || scale < 1 || scale > 16) throw new RangeError(`scale ${scale} is not 1–16`);
  const span = rows.length;
  const width = span * scale;
  const stride = 1 + Math.ceil(width / 8);
  // At most: every module row written once as 9-bit literals, and the repeats as back-references
  // of at most 4 bytes each, every one but the last of a run covering 255 bytes or more; then the
  // framing around them. From Node's buffer pool (every byte returned is written): a fresh
  // zero-filled buffer costs more.
  const literals = span * Math.ceil((stride * 9) / 8);
  const copies = 4 * (span + Math.ceil((width * stride) / 255));
  const out = Buffer.allocUnsafe(8 + 25 + 12 + 2 + literals + copies + 2 + 4 + 12);
  out.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  out.writeUInt32BE(width, 16);
  out.writeUInt32BE(width, 20);
  // Bit depth 1; colour type 0 (greyscale); compression, filter and interlace methods 0.
  out.set([1, 0, 0, 0, 0], 24);
  let at = chunk(out, 8, 'IHDR', 13);

  const sink = new BitSink(out.subarray(at + 8));
  sink.put(0x78, 8); // zlib header: deflate, 32 KB window…
  sink.put(0x01, 8); // …no dictionary, check bits
  sink.put(0b011, 3); // final block, fixed Huffman codes
  // Adler-32 of the uncompressed image (RFC 1950). Appending bytes x[0…n-1] to (a, b) adds
  // Σx to a and n·a + Σ(n − i)·x[i] to b, so a line's repeats cost one step each.
  let a = 1;
  let b = 0;
  /** One pixel line (filter byte 0, then light = 1 bits) written once and repeated `times` times. */
  const emit = (line: Uint8Array, times: number) => {
    sink.literals(line);
    if (times > 1) sink.copy((times - 1) * stride, stride);
    let sum = 0;
    let weighted = 0;
    for (let i = 0; i < stride; i++) {
      sum += line[i]!;
      weighted += (stride - i) * line[i]!;
    }
    for (let k = 0; k < times; k++) {
      b = (b + stride * a + weighted) % 65521;
      a = (a + sum) % 65521;
    }
  };
  const on = (1 << scale) - 1;
  const line = new Uint8Array(stride);
  /** A module row as a pixel line. */
  const draw = (row: readonly boolean[]) => {
    let acc = 0;
    let bits = 0;
    let x = 1;
    for (let c = 0; c < span; c++) {
      acc = (acc << scale) | (row[c] ? 0 : on);
      bits += scale;
      while (bits >= 8) {
        bits -= 8;
        line[x++] = (acc >>> bits) & 0xff;
      }
      acc &= (1 << bits) - 1;
    }
    if (bits > 0) line[x] = (acc << (8 - bits)) & 0xff;
    return line;
  };
  const same = (p: readonly boolean[], q: readonly boolean[]) => {
    for (let c = 0; c < span; c++) if (p[c] !== q[c]) return false;
    return true;
  };
  // Equal module rows (the quiet zone above and below) are one line and its repeats.
  for (let r = 0; r < span;) {
    let next = r + 1;
    while (next < span && same(rows[r]!, rows[next]!)) next++;
    emit(draw(rows[r]!), (next - r) * scale);
    r = next;
  }
  sink.literal(256); // end of block
  sink.flush();
  for (const byte of [b >>> 8, b & 0xff, a >>> 8, a & 0xff]) sink.put(byte, 8);
  at = chunk(out, at, 'IDAT', sink.length);
  at = chunk(out, at, 'IEND', 0);
  return out.subarray(0, at);
}
