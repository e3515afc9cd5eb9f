/**
 * The data codewords of a QR symbol at error correction level L, from the segments and version
 * the qrcode package would choose for the text (see `chooseSegments`), and the package's tables
 * for level L that the rest of the symbol needs.
 */
import { createRequire } from 'node:module';

const requireCjs = createRequire(import.meta.url);
const ECL_L = (requireCjs('qrcode/lib/core/error-correction-level.js') as { L: object }).L;
const ecTables = requireCjs('qrcode/lib/core/error-correction-code.js') as {
  getBlocksCount(version: number, ecl: object): number;
  getTotalCodewordsCount(version: number, ecl: object): number;
};
const utils = requireCjs('qrcode/lib/core/utils.js') as { getSymbolTotalCodewords(version: number): number };
const formatInfo = requireCjs('qrcode/lib/core/format-info.js') as {
  getEncodedBits(ecl: object, mask: number): number;
};

/** The qrcode package's own tables (no public API) at level L, so sizes and blocks are its own. */
export const LEVEL_L = {
  totalCodewords: (version: number) => utils.getSymbolTotalCodewords(version),
  blocks: (version: number) => ecTables.getBlocksCount(version, ECL_L),
  /** The 15 format information bits for a mask pattern. */
  formatBits: (mask: number) => formatInfo.getEncodedBits(ECL_L, mask),
};

/** Data codewords per version at level L (index 0 unused). */
const DATA_CODEWORDS = Array.from({ length: 41 }, (_, v) =>
  v === 0 ? 0 : utils.getSymbolTotalCodewords(v) - ecTables.getTotalCodewordsCount(v, ECL_L),
);

// Segment modes, and per mode its 4-bit indicator and character-count bits by version range.
const NUMERIC = 0;
const ALPHANUMERIC = 1;
const BYTE = 2;
type Mode = typeof NUMERIC | typeof ALPHANUMERIC | typeof BYTE;
const MODE_INDICATOR = [1, 2, 4];
const CC_BITS = [
  [10, 12, 14],
  [9, 11, 13],
  [8, 16, 16],
];
const ccBits = (mode: Mode, version: number) => CC_BITS[mode]![version < 10 ? 0 : version < 27 ? 1 : 2]!;

function segmentBits(mode: Mode, n: number): number {
  if (mode === NUMERIC) return 10 * Math.floor(n / 3) + (n % 3 ? (n % 3) * 3 + 1 : 0);
  if (mode === ALPHANUMERIC) return 11 * Math.floor(n / 2) + 6 * (n % 2);
  return 8 * n;
}

const ALPHANUMERIC_CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';
/** Per ASCII code: its alphanumeric value (-1 when none) and the mode of the run it belongs to. */
const ALNUM_VALUE = new Int8Array(128).fill(-1);
const CHAR_MODE = new Uint8Array(128).fill(BYTE);
for (let k = 0; k < ALPHANUMERIC_CHARS.length; k++) {
  const code = ALPHANUMERIC_CHARS.charCodeAt(k);
  ALNUM_VALUE[code] = k;
  CHAR_MODE[code] = k < 10 ? NUMERIC : ALPHANUMERIC;
}

interface Segment {
  mode: Mode;
  start: number;
  end: number;
}

/**
 * The package's `getBestVersionForData`: the smallest version that holds the segments (segment g
 * is `mode[g]` from `start[g]` to `start[g + 1]`), if any.
 */
function bestVersion(count: number, mode: ArrayLike<number>, start: ArrayLike<number>): number | undefined {
  if (count === 1) {
    // One segment is measured in characters, with the package's own rounding.
    const m = mode[0] as Mode;
    const length = start[1]! - start[0]!;
    for (let v = 1; v <= 40; v++) {
      const usable = DATA_CODEWORDS[v]! * 8 - (4 + ccBits(m, v));
      const fits =
        m === NUMERIC
          ? Math.floor((usable / 10) * 3)
          : m === ALPHANUMERIC
            ? Math.floor((usable / 11) * 2)
            : Math.floor(usable / 8);
      if (length <= fits) return v;
    }
    return undefined;
  }
  // Several: the bits of all of them with their headers, whose count fields depend on the version range.
  let bits = 0;
  const counts = [0, 0, 0];
  for (let g = 0; g < count; g++) {
    const m = mode[g] as Mode;
    bits += 4 + segmentBits(m, start[g + 1]! - start[g]!);
    for (let range = 0; range < 3; range++) counts[range]! += CC_BITS[m]![range]!;
  }
  for (let v = 1; v <= 40; v++) {
    if (bits + counts[v < 10 ? 0 : v < 27 ? 1 : 2]! <= DATA_CODEWORDS[v]! * 8) return v;
  }
  return undefined;
}

/** Working arrays of `chooseSegments` for texts of up to `chars` characters. */
function newWork(chars: number) {
  return {
    chars,
    runMode: new Uint8Array(chars),
    runStart: new Int32Array(chars + 1),
    nodeMode: new Uint8Array(3 * chars),
    nodeRun: new Int32Array(3 * chars),
    lastCount: new Int32Array(3 * chars),
    weight: new Int32Array(9 * chars),
    groupStart: new Int32Array(chars + 1),
    cost: new Float64Array(3 * chars + 1),
    predecessor: new Int32Array(3 * chars + 1),
    queueNode: new Int32Array(9 * chars + 4),
    queueCost: new Float64Array(9 * chars + 4),
  };
}
// Reused (the search is synchronous): allocating these per call cost more than the search itself.
let work = newWork(256);

/**
 * The segments `QRCode.create` chooses for an ASCII text, or null for other text (the package
 * then decides itself).
 *
 * The package splits the text into runs of digits, of other alphanumeric characters and of the
 * rest, offers each run in every mode that can hold it, and takes the cheapest path through that
 * graph with the dijkstrajs module. Its edge weights have a quirk (a node's running count is reset
 * by edges to other modes, in the order the edges are built), and when two paths cost the same the
 * one it returns depends on the order its queue explores them. Both are reproduced as they are,
 * since identity with the package is the point; the graph lives in flat arrays because building
 * the package's objects cost more than the rest of the symbol.
 */
function chooseSegments(text: string): Segment[] | null {
  if (text.length === 0) return null;
  if (text.length > work.chars) work = newWork(Math.max(text.length, 2 * work.chars));
  const { runMode, runStart, nodeMode, nodeRun, lastCount, weight, groupStart, cost, predecessor } = work;
  const { queueNode, queueCost } = work;
  let runs = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 127) return null;
    const mode = CHAR_MODE[code]!;
    if (runs === 0 || runMode[runs - 1] !== mode) {
      runMode[runs] = mode;
      runStart[runs++] = i;
    }
  }
  runStart[runs] = text.length;
  const estimate = bestVersion(runs, runMode, runStart) ?? 40;

  // The package's buildGraph. A run offers its own mode, then the wider ones (numeric, then
  // alphanumeric, then byte); group g holds run g's nodes, groupStart[g] to groupStart[g + 1].
  // weight[3n + j] is the edge from node n to node j of the next group.
  const firstWeight = [0, 0, 0];
  let count = 0;
  for (let g = 0; g < runs; g++) {
    const length = runStart[g + 1]! - runStart[g]!;
    groupStart[g] = count;
    for (let mode = runMode[g] as Mode; mode <= BYTE; mode++) {
      const j = mode - runMode[g]!;
      const n = count++;
      nodeMode[n] = mode;
      nodeRun[n] = g;
      lastCount[n] = 0;
      const switchTo = segmentBits(mode, length) + 4 + ccBits(mode, estimate);
      if (g === 0) firstWeight[j] = switchTo;
      for (let prev = g === 0 ? n : groupStart[g - 1]!; prev < n - j; prev++) {
        if (nodeMode[prev] === mode) {
          const before = lastCount[prev]!;
          weight[3 * prev + j] = segmentBits(mode, before + length) - segmentBits(mode, before);
          lastCount[prev] = before + length;
        } else {
          lastCount[prev] = length;
          weight[3 * prev + j] = switchTo;
        }
      }
    }
  }
  groupStart[runs] = count;

  // dijkstrajs's search: a queue kept sorted by cost (stably, so equal costs leave in the order
  // they came), a node re-queued whenever its cost strictly improves. Node -1 is the start, node
  // `count` the end.
  cost.fill(Infinity, 0, count + 1);
  let head = 0;
  let tail = 1;
  queueNode[0] = -1;
  queueCost[0] = 0;
  while (head < tail) {
    const u = queueNode[head]!;
    const uCost = queueCost[head++]!;
    const group = u < 0 ? 0 : nodeRun[u]! + 1;
    const from = group < runs ? groupStart[group]! : count;
    const to = group < runs ? groupStart[group + 1]! : count + 1;
    for (let v = from; v < to; v++) {
      const c = uCost + (u < 0 ? firstWeight[v]! : v === count ? 0 : weight[3 * u + v - from]!);
      if (c < cost[v]!) {
        cost[v] = c;
        predecessor[v] = u;
        let at = tail++;
        for (; at > head && queueCost[at - 1]! > c; at--) {
          queueNode[at] = queueNode[at - 1]!;
          queueCost[at] = queueCost[at - 1]!;
        }
        queueNode[at] = v;
        queueCost[at] = c;
      }
    }
  }
  // Back along the path, merging neighbours of one mode into one segment as the package does.
  const segments: Segment[] = [];
  for (let n = predecessor[count]!; n >= 0; n = predecessor[n]!) {
    const g = nodeRun[n]!;
    const mode = nodeMode[n] as Mode;
    const head = segments[0];
    if (head && head.mode === mode) head.start = runStart[g]!;
    else segments.unshift({ mode, start: runStart[g]!, end: runStart[g + 1]! });
  }
  return segments;
}

/** Writes big-endian bit fields into a byte array. */
class BitWriter {
  private acc = 0;
  private bits = 0;
  length = 0;
  constructor(readonly bytes: Uint8Array) {}

  /** Appends the low `n` (at most 16) bits of `value`. */
  put(value: number, n: number): void {
    this.acc = (this.acc << n) | value;
    this.bits += n;
    while (this.bits >= 8) {
      this.bits -= 8;
      this.bytes[this.length++] = this.acc >>> this.bits;
    }
    this.acc &= (1 << this.bits) - 1;
  }

  get bitLength(): number {
    return this.length * 8 + this.bits;
  }
}

/** One data codewords array per version, reused: `encodeText`'s result lasts until its next call. */
const dataArrays = new Map<number, Uint8Array>();

/** The data codewords: segments, terminator, padding (the package's `createData`). */
function dataCodewords(text: string, segments: readonly Segment[], version: number): Uint8Array {
  let bytes = dataArrays.get(version);
  if (!bytes) dataArrays.set(version, (bytes = new Uint8Array(DATA_CODEWORDS[version]!)));
  const w = new BitWriter(bytes);
  for (const { mode, start, end } of segments) {
    w.put(MODE_INDICATOR[mode]!, 4);
    w.put(end - start, ccBits(mode, version));
    let i = start;
    if (mode === NUMERIC) {
      const digit = (k: number) => text.charCodeAt(k) - 48;
      for (; i + 3 <= end; i += 3) w.put(digit(i) * 100 + digit(i + 1) * 10 + digit(i + 2), 10);
      if (end - i === 2) w.put(digit(i) * 10 + digit(i + 1), 7);
      else if (end - i === 1) w.put(digit(i), 4);
    } else if (mode === ALPHANUMERIC) {
      const value = (k: number) => ALNUM_VALUE[text.charCodeAt(k)]!;
      for (; i + 2 <= end; i += 2) w.put(value(i) * 45 + value(i + 1), 11);
      if (i < end) w.put(value(i), 6);
    } else {
      for (; i < end; i++) w.put(text.charCodeAt(i), 8);
    }
  }
  const capacity = w.bytes.length * 8;
  if (w.bitLength + 4 <= capacity) w.put(0, 4);
  if (w.bitLength % 8) w.put(0, 8 - (w.bitLength % 8));
  for (let pad = 0; w.length < w.bytes.length; pad++) w.bytes[w.length++] = pad % 2 ? 0x11 : 0xec;
  return w.bytes;
}

/**
 * The version and data codewords `QRCode.create(text, { errorCorrectionLevel: 'L' })` would use,
 * or null when this cannot tell: text that is not ASCII or does not fit in any symbol. The data
 * array is reused by the next call.
 */
export function encodeText(text: string): { version: number; data: Uint8Array } | null {
  const segments = chooseSegments(text);
  if (!segments) return null;
  const starts = segments.map((segment) => segment.start);
  starts.push(text.length);
  const version = bestVersion(
    segments.length,
    segments.map((segment) => segment.mode),
    starts,
  );
  if (!version) return null;
  return { version, data: dataCodewords(text, segments, version) };
}
