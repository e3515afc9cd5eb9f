/** UPI intents, app deep links and their QR code (CONTRACT §5, offsite flow). */
import { createRequire } from 'node:module';
import { constants as zlibConstants, crc32, deflateSync } from 'node:zlib';
import QRCode from 'qrcode';
import { formatAmount } from '../money.ts';

export interface UpiPayment {
  payeeVpa: string;
  payeeName: string;
  /** paise */
  amount: number;
  currency: string;
  paymentId: string;
  orderNo: string;
}

/** The query every UPI app understands: pa, pn, am, cu, tr, tn, each URL-encoded. */
export function upiQuery(p: UpiPayment): string {
  const e = encodeURIComponent;
  return `pa=${e(p.payeeVpa)}&pn=${e(p.payeeName)}&am=${formatAmount(p.amount)}&cu=${e(p.currency)}&tr=${e(p.paymentId)}&tn=${e(p.orderNo)}`;
}

export function upiIntent(p: UpiPayment): string {
  return `upi://pay?${upiQuery(p)}`;
}

export function deepLinks(p: UpiPayment): { upi: string; gpay: string; phonepe: string; paytm: string } {
  const q = upiQuery(p);
  return {
    upi: `upi://pay?${q}`,
    gpay: `tez://upi/pay?${q}`,
    phonepe: `phonepe://pay?${q}`,
    paytm: `paytmmp://pay?${q}`,
  };
}

/** Pixels per module and quiet-zone modules of the PNG. */
const PNG_SCALE = 4;
const PNG_MARGIN = 2;

/**
 * A PNG data URL of the intent. Error correction L and 4-pixel modules keep the image small;
 * phone cameras read it easily from a screen.
 *
 * The QR code was the largest cost of an offsite pay-in: `QRCode.toDataURL` took about 4.5 ms of
 * CPU per call, 3.5 ms of it in the package's PNG renderer (an RGBA image streamed through pngjs).
 * This makes the identical symbol (`qrSymbol`) and writes a small greyscale PNG itself: about
 * 0.5 ms in all (see docs/performance.md).
 */
export async function qrDataUrl(text: string): Promise<string> {
  return `data:image/png;base64,${qrPng(qrSymbol(text).modules, PNG_SCALE, PNG_MARGIN).toString('base64')}`;
}

// The qrcode package's own helpers for the version estimate its `create` makes (no public API).
const requireCjs = createRequire(import.meta.url);
const rawSplit = (requireCjs('qrcode/lib/core/segments.js') as { rawSplit(text: string): unknown[] })
  .rawSplit;
const bestVersion = (
  requireCjs('qrcode/lib/core/version.js') as {
    getBestVersionForData(segments: unknown[], ecl: string): number | undefined;
  }
).getBestVersionForData;

type SegmentMode = 'numeric' | 'alphanumeric' | 'byte';
const SEGMENT_RUNS = /([0-9]+)|([A-Z $%*+\-./:]+)|([^A-Z0-9 $%*+\-./:]+)/g;
const CHAR_COUNT_BITS: Record<SegmentMode, [number, number, number]> = {
  numeric: [10, 12, 14],
  alphanumeric: [9, 11, 13],
  byte: [8, 16, 16],
};

function segmentBits(mode: SegmentMode, length: number): number {
  if (mode === 'numeric') return 10 * Math.floor(length / 3) + (length % 3 ? (length % 3) * 3 + 1 : 0);
  if (mode === 'alphanumeric') return 11 * Math.floor(length / 2) + 6 * (length % 2);
  return 8 * length;
}

/**
 * The same symbol as `QRCode.create(text, { errorCorrectionLevel: 'L' })`, faster for the usual
 * UPI intent. `create` picks its segments (numeric, alphanumeric, byte runs) with a shortest-path
 * search over a graph it builds per call, which cost about as much as everything else in the
 * symbol. This walks the same graph with the same edge weights (quirks included) to learn whether
 * one byte segment for the whole text is the one cheapest choice; if so it asks for exactly that
 * segment, which yields the identical symbol. Otherwise (long digit runs, say) it lets `create`
 * choose.
 */
export function qrSymbol(text: string): QRCode.QRCode {
  const segments: string | QRCode.QRCodeSegment[] = singleByteSegmentIsBest(text)
    ? [{ data: Buffer.from(text), mode: 'byte' }]
    : text;
  // Built with mask 0, then given the mask `create` would have chosen (see `chooseMask`).
  const symbol = QRCode.create(segments, { errorCorrectionLevel: 'L', maskPattern: 0 });
  chooseMask(symbol);
  return symbol;
}

/** The 15 format bits for error correction L and a mask pattern (the qrcode package's own table). */
const formatBits = (
  requireCjs('qrcode/lib/core/format-info.js') as {
    getEncodedBits(ecl: { bit: number }, mask: number): number;
  }
).getEncodedBits.bind(null, { bit: 1 });

/** Whether mask pattern `p` flips the module at (row, col): ISO/IEC 18004 table 10. */
const MASKS: ((i: number, j: number) => boolean)[] = [
  (i, j) => (i + j) % 2 === 0,
  (i) => i % 2 === 0,
  (_i, j) => j % 3 === 0,
  (i, j) => (i + j) % 3 === 0,
  (i, j) => (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0,
  (i, j) => ((i * j) % 2) + ((i * j) % 3) === 0,
  (i, j) => (((i * j) % 2) + ((i * j) % 3)) % 2 === 0,
  (i, j) => (((i * j) % 3) + ((i + j) % 2)) % 2 === 0,
];

/** Where the format bits go (both copies), as `create` places them. */
function formatPositions(size: number): { index: number; bit: number }[] {
  const at: { index: number; bit: number }[] = [];
  for (let i = 0; i < 15; i++) {
    at.push({ index: (i < 6 ? i : i < 8 ? i + 1 : size - 15 + i) * size + 8, bit: i });
    at.push({ index: 8 * size + (i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1), bit: i });
  }
  return at;
}

interface MaskLayout {
  /** Per pattern, 1 where it flips a module: data modules only (function patterns are reserved). */
  flips: Uint8Array[];
  format: { index: number; bit: number }[];
}

/** The layout depends only on the symbol size (its version), so it is computed once per size. */
const layouts = new Map<number, MaskLayout>();

function maskLayout(size: number, reserved: Uint8Array): MaskLayout {
  let layout = layouts.get(size);
  if (!layout) {
    const flips = MASKS.map((mask) => {
      const f = new Uint8Array(size * size);
      for (let i = 0; i < size; i++)
        for (let j = 0; j < size; j++) f[i * size + j] = !reserved[i * size + j] && mask(i, j) ? 1 : 0;
      return f;
    });
    layout = { flips, format: formatPositions(size) };
    layouts.set(size, layout);
  }
  return layout;
}

/**
 * Re-masks a symbol built with mask 0 with the pattern of least penalty, scored exactly as the
 * qrcode package's `getBestMask` scores it (same rules N1–N4, same order, first lowest wins), so
 * the result equals what `create` returns when left to choose. The package's version calls a
 * function per module per rule; this one works on the bytes and takes a fraction of the time.
 */
function chooseMask(symbol: QRCode.QRCode): void {
  const m = symbol.modules as QRCode.BitMatrix & { reservedBit: Uint8Array };
  const { size, data } = m;
  const { flips, format } = maskLayout(size, m.reservedBit);
  const cells = size * size;
  const unmasked = new Uint8Array(cells);
  const flip0 = flips[0]!;
  for (let k = 0; k < cells; k++) unmasked[k] = data[k]! ^ flip0[k]!;
  let best = data;
  let bestPattern = 0;
  let lowest = Infinity;
  for (let p = 0; p < 8; p++) {
    const candidate = new Uint8Array(cells);
    const flip = flips[p]!;
    for (let k = 0; k < cells; k++) candidate[k] = unmasked[k]! ^ flip[k]!;
    const bits = formatBits(p);
    for (const { index, bit } of format) candidate[index] = (bits >> bit) & 1;
    const penalty = maskPenalty(candidate, size);
    if (penalty < lowest) {
      lowest = penalty;
      best = candidate;
      bestPattern = p;
    }
  }
  data.set(best);
  (symbol as { maskPattern: number }).maskPattern = bestPattern;
}

/** ISO/IEC 18004 §7.8.3 penalty, computed as the qrcode package computes it. */
function maskPenalty(d: Uint8Array, size: number): number {
  let n1 = 0;
  let n2 = 0;
  let n3 = 0;
  let dark = 0;
  for (let a = 0; a < size; a++) {
    let runRow = 0;
    let runCol = 0;
    let lastRow = -1;
    let lastCol = -1;
    let windowRow = 0;
    let windowCol = 0;
    const rowStart = a * size;
    for (let b = 0; b < size; b++) {
      const h = d[rowStart + b]!;
      const v = d[b * size + a]!;
      dark += h;
      if (h === lastRow) runRow++;
      else {
        if (runRow >= 5) n1 += runRow - 2;
        lastRow = h;
        runRow = 1;
      }
      if (v === lastCol) runCol++;
      else {
        if (runCol >= 5) n1 += runCol - 2;
        lastCol = v;
        runCol = 1;
      }
      windowRow = ((windowRow << 1) & 0x7ff) | h;
      windowCol = ((windowCol << 1) & 0x7ff) | v;
      if (b >= 10) {
        if (windowRow === 0x5d0 || windowRow === 0x05d) n3++;
        if (windowCol === 0x5d0 || windowCol === 0x05d) n3++;
      }
      if (a < size - 1 && b < size - 1) {
        const block = h + d[rowStart + b + 1]! + d[rowStart + size + b]! + d[rowStart + size + b + 1]!;
        if (block === 0 || block === 4) n2++;
      }
    }
    // A run of five or more scores 3, plus 1 for each module beyond five.
    if (runRow >= 5) n1 += runRow - 2;
    if (runCol >= 5) n1 += runCol - 2;
  }
  const n4 = Math.abs(Math.ceil((dark * 100) / (size * size) / 5) - 10);
  return n1 + n2 * 3 + n3 * 40 + n4 * 10;
}

function singleByteSegmentIsBest(text: string): boolean {
  const version = bestVersion(rawSplit(text), 'L') ?? 40;
  const range = version < 10 ? 0 : version < 27 ? 1 : 2;
  const header = (mode: SegmentMode) => 4 + CHAR_COUNT_BITS[mode][range];
  interface GraphNode {
    mode: SegmentMode;
    length: number;
    lastCount: number;
    /** Cheapest path to here, and cheapest path to here through at least one non-byte node. */
    best: number;
    bestMixed: number;
  }
  let previous: GraphNode[] = [];
  for (const m of text.matchAll(SEGMENT_RUNS)) {
    const run = m[0];
    const group: GraphNode[] = [];
    if (m[1] !== undefined)
      group.push({ mode: 'numeric', length: run.length, lastCount: 0, best: Infinity, bestMixed: Infinity });
    if (m[3] === undefined)
      group.push({
        mode: 'alphanumeric',
        length: run.length,
        lastCount: 0,
        best: Infinity,
        bestMixed: Infinity,
      });
    group.push({
      mode: 'byte',
      length: Buffer.byteLength(run),
      lastCount: 0,
      best: Infinity,
      bestMixed: Infinity,
    });
    for (const node of group) {
      if (previous.length === 0) {
        node.best = segmentBits(node.mode, node.length) + header(node.mode);
        if (node.mode !== 'byte') node.bestMixed = node.best;
        continue;
      }
      // The weights of the package's buildGraph, including how it carries `lastCount` along.
      for (const prev of previous) {
        let weight: number;
        if (prev.mode === node.mode) {
          weight =
            segmentBits(node.mode, prev.lastCount + node.length) - segmentBits(node.mode, prev.lastCount);
          prev.lastCount += node.length;
        } else {
          prev.lastCount = node.length;
          weight = segmentBits(node.mode, node.length) + header(node.mode);
        }
        node.best = Math.min(node.best, prev.best + weight);
        node.bestMixed = Math.min(
          node.bestMixed,
          (node.mode === 'byte' ? prev.bestMixed : prev.best) + weight,
        );
      }
    }
    previous = group;
  }
  // The all-byte path (one byte node per group) costs one header plus 8 bits a byte; it is the
  // one shortest path when every path through another node costs more.
  const allBytePath = header('byte') + 8 * Buffer.byteLength(text);
  return previous.length > 0 && allBytePath < Math.min(...previous.map((n) => n.bestMixed));
}

function pngChunk(type: string, data: Buffer): Buffer {
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'ascii');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/**
 * An 8-bit greyscale PNG of a QR matrix. Each module row is written once (filter None) and its
 * repeats as "same as the row above" (filter Up, all zeros), which deflates to almost nothing.
 */
export function qrPng(modules: { size: number; data: Uint8Array }, scale: number, margin: number): Buffer {
  const { size, data } = modules;
  const width = (size + 2 * margin) * scale;
  const stride = width + 1;
  const raw = Buffer.alloc(stride * width);
  for (let y = 0; y < width; y++) {
    const line = y * stride;
    if (y % scale !== 0) {
      raw[line] = 2;
      continue;
    }
    raw.fill(255, line + 1, line + stride);
    const row = y / scale - margin;
    if (row < 0 || row >= size) continue;
    for (let col = 0; col < size; col++) {
      if (!data[row * size + col]) continue;
      const x = line + 1 + (col + margin) * scale;
      for (let k = 0; k < scale; k++) raw[x + k] = 0;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(width, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale; compression, filter method and interlace stay 0
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    // Run-length matching suits an image of long runs: about ten times faster than the default, and smaller.
    pngChunk('IDAT', deflateSync(raw, { strategy: zlibConstants.Z_RLE })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The same QR as SVG markup, for the hosted pages (no image request, sharp at any size). */
export function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'L', margin: 2 });
}
