/**
 * QR code symbols (ISO/IEC 18004) at error correction level L, module for module the symbol
 * `QRCode.create(text, { errorCorrectionLevel: 'L' })` of the qrcode package makes, in under a
 * tenth of its time (about 65 µs against 900 µs for a UPI intent; bench/qr.ts times the whole
 * data URL).
 *
 * What the package recomputes on every call is done here once per version: the function patterns
 * (drawn by the package itself, so they are its own), the order in which data bits are placed,
 * and which modules each of the eight masks flips. A call then only encodes the segments, adds the
 * Reed–Solomon codewords, places the bits and scores the masks.
 */
import QRCode from 'qrcode';
import { bestMask, type MaskScratch, newMaskScratch } from './qr-mask.ts';
import { encodeText, LEVEL_L } from './qr-segments.ts';

/** A square of modules, row after row, 1 = dark. */
export interface QrModules {
  size: number;
  data: Uint8Array;
  version: number;
  maskPattern: number;
}

// GF(256) with the QR polynomial x^8 + x^4 + x^3 + x^2 + 1; EXP doubled so products need no modulo.
const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
for (let i = 0, x = 1; i < 255; i++) {
  EXP[i] = x;
  LOG[x] = i;
  x <<= 1;
  if (x & 0x100) x ^= 0x11d;
}
for (let i = 255; i < 512; i++) EXP[i] = EXP[i - 255]!;

/**
 * Per degree, the generator polynomial's coefficients after the leading 1 multiplied by every
 * byte: row f (degree bytes from f × degree) is f × g. One table look-up per codeword then
 * replaces two logarithms and an antilogarithm.
 */
const generators = new Map<number, Uint8Array>();
function generatorProducts(degree: number): Uint8Array {
  let products = generators.get(degree);
  if (!products) {
    // (x - α^0)(x - α^1)…(x - α^(degree-1)), highest power first.
    let poly = new Uint8Array([1]);
    for (let i = 0; i < degree; i++) {
      const next = new Uint8Array(poly.length + 1);
      for (let j = 0; j < poly.length; j++) {
        next[j]! ^= poly[j]!;
        if (poly[j]) next[j + 1]! ^= EXP[LOG[poly[j]!]! + i]!;
      }
      poly = next;
    }
    products = new Uint8Array(256 * degree);
    for (let f = 1; f < 256; f++) {
      for (let k = 0; k < degree; k++) {
        // Every coefficient of these generators is non-zero, so each has a log.
        products[f * degree + k] = EXP[LOG[f]! + LOG[poly[k + 1]!]!]!;
      }
    }
    generators.set(degree, products);
  }
  return products;
}

/** A block's error correction codewords (at most 30 in any QR symbol). */
const ec = new Uint8Array(30);

/**
 * Data and error correction codewords, split into blocks and interleaved as the standard says,
 * into `out` (the version's total codewords long).
 */
function allCodewords(data: Uint8Array, version: number, out: Uint8Array): void {
  const total = LEVEL_L.totalCodewords(version);
  const blocks = LEVEL_L.blocks(version);
  const shortBlocks = blocks - (total % blocks);
  const shortData = Math.floor(data.length / blocks);
  const ecCount = Math.floor(total / blocks) - shortData;
  const products = generatorProducts(ecCount);
  const last = ecCount - 1;
  for (let b = 0, offset = 0; b < blocks; b++) {
    const size = b < shortBlocks ? shortData : shortData + 1;
    // Remainder of the block (times x^ecCount) divided by the generator, by long division.
    ec.fill(0, 0, ecCount);
    for (let i = 0; i < size; i++) {
      const row = (data[offset + i]! ^ ec[0]!) * ecCount;
      for (let k = 0; k < last; k++) ec[k] = ec[k + 1]! ^ products[row + k]!;
      ec[last] = products[row + last]!;
    }
    // Data codeword i of block b goes to i * blocks + b, except past the short blocks' end.
    for (let i = 0; i < size; i++) {
      out[i < shortData ? i * blocks + b : shortData * blocks + (b - shortBlocks)] = data[offset + i]!;
    }
    for (let k = 0; k < ecCount; k++) out[data.length + k * blocks + b] = ec[k]!;
    offset += size;
  }
}

/** Whether mask pattern `p` flips the module at (row i, column j): ISO/IEC 18004 table 10. */
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

interface Layout {
  size: number;
  /**
   * One byte per module whose bit p is the module under mask p before the data goes in: function
   * modules as drawn (the format information as mask p has it), data modules as mask p flips them.
   * Placing a dark data bit then inverts its whole byte.
   */
  base: Uint8Array;
  /** Module index of each data bit, in placement order (any left over stay light). */
  order: Uint16Array;
  scratch: MaskScratch;
  /** All codewords of the symbol, rewritten by each call. */
  codewords: Uint8Array;
}

const layouts = new Map<number, Layout>();

function layout(version: number): Layout {
  let l = layouts.get(version);
  if (l) return l;
  // The package draws the function patterns; any text will do at a fixed version and mask.
  const drawn = QRCode.create('0', { version, errorCorrectionLevel: 'L', maskPattern: 0 }).modules as {
    size: number;
    data: Uint8Array;
    reservedBit: Uint8Array;
  };
  const { size, data, reservedBit } = drawn;
  const base = new Uint8Array(size * size);
  for (let i = 0; i < size; i++) {
    for (let j = 0; j < size; j++) {
      const k = i * size + j;
      let byte = 0;
      for (let p = 0; p < 8; p++) if (reservedBit[k] ? data[k] : MASKS[p]!(i, j)) byte |= 1 << p;
      base[k] = byte;
    }
  }
  // The 15 format bits, both copies, where the package's setupFormatInfo puts them.
  for (let bit = 0; bit < 15; bit++) {
    let byte = 0;
    for (let p = 0; p < 8; p++) byte |= ((LEVEL_L.formatBits(p) >> bit) & 1) << p;
    base[(bit < 6 ? bit : bit < 8 ? bit + 1 : size - 15 + bit) * size + 8] = byte;
    base[8 * size + (bit < 8 ? size - bit - 1 : bit < 9 ? 15 - bit : 14 - bit)] = byte;
  }
  // Two columns at a time from the right, upwards then downwards, skipping the timing column.
  const order: number[] = [];
  for (let col = size - 1, up = true; col > 0; col -= 2, up = !up) {
    if (col === 6) col--;
    for (let n = 0; n < size; n++) {
      const row = up ? size - 1 - n : n;
      for (let c = 0; c < 2; c++) if (!reservedBit[row * size + col - c]) order.push(row * size + col - c);
    }
  }
  l = {
    size,
    base,
    order: Uint16Array.from(order),
    scratch: newMaskScratch(size),
    codewords: new Uint8Array(LEVEL_L.totalCodewords(version)),
  };
  layouts.set(version, l);
  return l;
}

/**
 * The modules of `QRCode.create(text, { errorCorrectionLevel: 'L' })`. Texts this encoder is not
 * sure about (see `chooseSegments`) go to the package itself, which also throws its own error for
 * an empty or too long text.
 */
export function qrModules(text: string): QrModules {
  const encoded = encodeText(text);
  if (!encoded) {
    const symbol = QRCode.create(text, { errorCorrectionLevel: 'L' });
    return {
      size: symbol.modules.size,
      data: symbol.modules.data,
      version: symbol.version,
      maskPattern: symbol.maskPattern as number,
    };
  }
  const { version } = encoded;
  const { size, base, order, scratch, codewords } = layout(version);
  allCodewords(encoded.data, version, codewords);
  const cells = scratch.cells;
  cells.set(base);
  for (let c = 0, k = 0; c < codewords.length; c++) {
    const byte = codewords[c]!;
    // A dark bit inverts the module's byte; no branch, as the bits are as good as random.
    for (let bit = 7; bit >= 0; bit--, k++) cells[order[k]!]! ^= -((byte >> bit) & 1) & 0xff;
  }
  const mask = bestMask(scratch);
  const data = new Uint8Array(size * size);
  for (let k = 0; k < data.length; k++) data[k] = (cells[k]! >> mask) & 1;
  return { size, data, version, maskPattern: mask };
}
