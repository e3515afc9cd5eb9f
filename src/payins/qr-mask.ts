/**
 * Choosing a QR symbol's mask: the penalty of ISO/IEC 18004 §7.8.3 for all eight patterns at
 * once, scored exactly as the qrcode package's `getBestMask` scores it (rules N1–N4, first lowest
 * wins), so the symbol stays the one the package makes.
 *
 * Each module is one byte whose bit p is its colour under mask p. Every rule is then a few bitwise
 * operations per module for all eight masks together, with no branch on the data: "equal to the
 * previous module" is `~(a ^ b)`, "five equal in a row" the AND of four of those. A module's
 * result byte is counted in a 256-entry histogram, and the histograms are split into eight
 * per-mask counts at the end. Scoring mask by mask (as the package does, and as this gateway did
 * on byte arrays) takes a mispredicted branch at almost every change of colour: about 240 µs per
 * symbol against about 45 µs here.
 */

/** Working memory for one symbol size; reused across calls (the scoring is synchronous). */
export interface MaskScratch {
  size: number;
  /** Bit p of byte k: module k under mask p. Filled by the caller. */
  cells: Uint8Array;
  /**
   * Histograms by byte value: ends of five equal modules in a row, starts of such runs, 2×2 blocks
   * of one colour, finder-like patterns, dark modules.
   */
  counts: Int32Array[];
  /** Their weighted sum, for `perMask`. */
  weighted: Float64Array;
}

/** Scratch memory for symbols of `size` × `size` modules. */
export function newMaskScratch(size: number): MaskScratch {
  return {
    size,
    cells: new Uint8Array(size * size),
    counts: Array.from({ length: 5 }, () => new Int32Array(256)),
    weighted: new Float64Array(256),
  };
}

const RUN_ENDS = 0;
const RUN_STARTS = 1;
const BLOCKS = 2;
const FINDERS = 3;
const DARK = 4;

/**
 * N1 and N3 along every row (`lineStep` = size, `step` = 1) or every column (1, size).
 *
 * N1 scores a run of L ≥ 5 equal modules L − 2, which is its number of "last five equal" positions
 * (L − 4) plus 2 for its start (a position whose last five are equal but not its last six).
 * N3 counts the windows of eleven modules reading 1011101 0000 or 0000 1011101: the 1011101 core
 * ending four modules before four light ones, or four light ones seven before a core ending here.
 */
function scanLines(s: MaskScratch, lineStep: number, step: number): void {
  const { size, cells } = s;
  const runEnds = s.counts[RUN_ENDS]!;
  const runStarts = s.counts[RUN_STARTS]!;
  const finders = s.counts[FINDERS]!;
  for (let line = 0; line < size; line++) {
    let k = line * lineStep;
    // c1…c6: the previous modules; e1…e4: previous "equal to the one before"; f1…f4: previous
    // cores; z1…z7: previous "four light ending here". Zero before the line starts.
    let c1 = cells[k]!;
    let c2 = 0;
    let c3 = 0;
    let c4 = 0;
    let c5 = 0;
    let c6 = 0;
    let e1 = 0;
    let e2 = 0;
    let e3 = 0;
    let e4 = 0;
    let f1 = 0;
    let f2 = 0;
    let f3 = 0;
    let f4 = 0;
    let z1 = 0;
    let z2 = 0;
    let z3 = 0;
    let z4 = 0;
    let z5 = 0;
    let z6 = 0;
    let z7 = 0;
    for (let i = 1; i < size; i++) {
      k += step;
      const c = cells[k]!;
      const eq = ~(c ^ c1) & 0xff;
      const five = eq & e1 & e2 & e3;
      runEnds[five]!++;
      runStarts[five & ~e4]!++;
      const core = c & ~c1 & c2 & c3 & c4 & ~c5 & c6;
      const light = ~(c | c1 | c2 | c3) & 0xff;
      // Windows are whole only from the eleventh module on (the package's `col >= 10`).
      const found = (f4 & light) | (z7 & core);
      if (found !== 0 && i >= 10) finders[found]!++;
      c6 = c5;
      c5 = c4;
      c4 = c3;
      c3 = c2;
      c2 = c1;
      c1 = c;
      e4 = e3;
      e3 = e2;
      e2 = e1;
      e1 = eq;
      f4 = f3;
      f3 = f2;
      f2 = f1;
      f1 = core;
      z7 = z6;
      z6 = z5;
      z5 = z4;
      z4 = z3;
      z3 = z2;
      z2 = z1;
      z1 = light;
    }
  }
}

/**
 * Per bit p, the sum of `histogram[v]` over the bytes v with bit p set. Halving the table
 * repeatedly (the upper half has the top bit set; then fold it onto the lower half) takes 510
 * additions instead of 8 × 256 tests. Overwrites `histogram`.
 */
function perMask(histogram: Float64Array): number[] {
  const sums = [0, 0, 0, 0, 0, 0, 0, 0];
  for (let p = 7, half = 128; p >= 0; p--, half >>= 1) {
    let sum = 0;
    for (let v = 0; v < half; v++) {
      sum += histogram[half + v]!;
      histogram[v]! += histogram[half + v]!;
    }
    sums[p] = sum;
  }
  return sums;
}

/** The mask pattern (0–7) of least penalty for the modules in `s.cells`. */
export function bestMask(s: MaskScratch): number {
  const { size, cells, counts } = s;
  for (const h of counts) h.fill(0);
  scanLines(s, size, 1);
  scanLines(s, 1, size);
  const blocks = counts[BLOCKS]!;
  for (let row = 0; row < size - 1; row++) {
    let k = row * size;
    let a = cells[k]!;
    let c = cells[k + size]!;
    for (let col = 1; col < size; col++) {
      k++;
      const b = cells[k]!;
      const d = cells[k + size]!;
      blocks[~((a ^ b) | (a ^ c) | (a ^ d)) & 0xff]!++;
      a = b;
      c = d;
    }
  }
  const darkHistogram = counts[DARK]!;
  for (let k = 0; k < cells.length; k++) darkHistogram[cells[k]!]!++;

  // N1 scores a run end 1 and a run start 2; N2 scores a block 3, N3 a pattern 40.
  const weighted = s.weighted;
  const ends = counts[RUN_ENDS]!;
  const starts = counts[RUN_STARTS]!;
  const finders = counts[FINDERS]!;
  for (let v = 0; v < 256; v++) weighted[v] = ends[v]! + 2 * starts[v]! + 3 * blocks[v]! + 40 * finders[v]!;
  const penalty = perMask(weighted);
  for (let v = 0; v < 256; v++) weighted[v] = darkHistogram[v]!;
  const dark = perMask(weighted);
  let best = 0;
  for (let p = 0; p < 8; p++) {
    // N4 as the package computes it, rounding included.
    penalty[p]! += 10 * Math.abs(Math.ceil((dark[p]! * 100) / cells.length / 5) - 10);
    if (penalty[p]! < penalty[best]!) best = p;
  }
  return best;
}
