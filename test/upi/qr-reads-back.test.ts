/**
 * The offsite pay-in's QR code (src/upi/: upi.ts, qr-png.ts, qr-svg.ts): the PNG of the data URL
 * and the SVG of the hosted page both read back, with decoders of their own (pngjs, jsQR), to
 * exactly the text encoded; the PNG is valid (chunk CRCs, zlib checksum) and shows exactly the
 * matrix it was given. Texts come from a seeded generator, so a failure reproduces.
 */
import assert from 'node:assert/strict';
import { crc32, inflateSync } from 'node:zlib';
import { describe, it } from 'node:test';
import encodeQR from 'qr';
import { qrPng } from '../../src/upi/qr-png.ts';
import { qrDataUrl, qrSvg, upiIntent } from '../../src/upi/upi.ts';
import { readQr, readQrPng } from '../support/qr-reader.ts';

/** mulberry32: a small seeded generator, so every run tests the same texts. */
function random(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const DIGITS = '0123456789';
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

function texts(seed: number, count: number, make: (rnd: (n: number) => number) => string): string[] {
  const rnd = random(seed);
  return Array.from({ length: count }, () => make(rnd));
}
const pick = (rnd: (n: number) => number, alphabet: string, length: number) =>
  Array.from({ length }, () => alphabet[rnd(alphabet.length)]).join('');

const intent = (rnd: (n: number) => number, orderNo: string, payeeName = 'Shop Name') =>
  upiIntent({
    payeeVpa: rnd(2) ? 'merchant@bank' : `${pick(rnd, ALNUM, 8)}@paygate`,
    payeeName,
    amount: 1 + rnd(1_000_000_000),
    currency: 'INR',
    paymentId: pick(rnd, ALNUM, 32),
    orderNo,
  });

/** Kinds of text: what the gateway encodes, and beyond it up to the largest symbols. */
const CASES: [string, string[]][] = [
  [
    'UPI intents, letters and digits in the order number',
    texts(1, 120, (r) => intent(r, `ORD-${pick(r, ALNUM, 1 + r(30))}`)),
  ],
  ['UPI intents, all-digit order numbers', texts(2, 80, (r) => intent(r, pick(r, DIGITS, 1 + r(36))))],
  [
    'UPI intents, any printable name and order number (percent-encoded)',
    texts(3, 80, (r) => intent(r, pick(r, PRINTABLE, 1 + r(36)), pick(r, PRINTABLE, 1 + r(60)))),
  ],
  ['printable ASCII of any length', texts(4, 50, (r) => pick(r, PRINTABLE, 1 + r(400)))],
  ['long texts, up to the largest versions', texts(5, 10, (r) => pick(r, `${DIGITS}Aa:%`, 1000 + r(1900)))],
  ['non-ASCII', texts(6, 20, (r) => `upi://pay?pn=${pick(r, 'Şhöp ₹ 店', 1 + r(20))}`)],
];

/** The PNG's chunks, each CRC checked, and its image rows after zlib (Adler-32 checked). */
function pngStructure(png: Buffer): { width: number; height: number; header: Buffer; raw: Buffer } {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const chunks: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const typeAndData = png.subarray(at + 4, at + 8 + length);
    assert.equal(png.readUInt32BE(at + 8 + length), crc32(typeAndData), 'chunk CRC');
    chunks.push({ type: typeAndData.toString('ascii', 0, 4), data: typeAndData.subarray(4) });
    at += 12 + length;
  }
  assert.deepEqual(
    chunks.map((c) => c.type),
    ['IHDR', 'IDAT', 'IEND'],
  );
  const header = chunks[0]!.data;
  // inflateSync checks the zlib stream, Adler-32 included.
  const raw = inflateSync(chunks[1]!.data);
  return { width: header.readUInt32BE(0), height: header.readUInt32BE(4), header, raw };
}

/**
 * The modules an SVG of qr-svg.ts draws: its background square and the horizontal strokes of its
 * path (`M x y+0.5`, `m dx 0`, `h n`), which must stay within the view box.
 */
function svgModules(svg: string): boolean[][] {
  const box =
    /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1" shape-rendering="crispEdges">/.exec(
      svg,
    );
  assert.ok(box, svg.slice(0, 120));
  const span = Number(box[1]);
  assert.ok(svg.includes(`<path fill="#ffffff" d="M0 0h${span}v${span}H0z"/>`), 'light background');
  const path = /<path stroke="#000000" d="([^"]*)"\/><\/svg>$/.exec(svg);
  assert.ok(path, 'one dark path');
  const rows = Array.from({ length: span }, () => new Array<boolean>(span).fill(false));
  let x = 0;
  let y = 0;
  for (const [, command, a, b] of path[1]!.matchAll(/([Mmh])(-?[\d.]+)(?: (-?[\d.]+))?/g)) {
    if (command === 'M') [x, y] = [Number(a), Number(b) - 0.5];
    else if (command === 'm') x += Number(a);
    else {
      for (let i = 0; i < Number(a); i++) rows[y]![x + i] = true;
      x += Number(a);
      assert.ok(x <= span && Number.isInteger(y) && y >= 0 && y < span, 'stroke inside the view box');
    }
  }
  return rows;
}

/** Modules as RGBA pixels, `scale` pixels each, for the decoder. */
function rgbaOf(rows: boolean[][], scale: number): { rgba: Uint8Array; width: number } {
  const width = rows.length * scale;
  const rgba = new Uint8Array(width * width * 4).fill(255);
  for (let y = 0; y < width; y++) {
    for (let x = 0; x < width; x++) {
      if (rows[Math.floor(y / scale)]![Math.floor(x / scale)])
        rgba.fill(0, (y * width + x) * 4, (y * width + x) * 4 + 3);
    }
  }
  return { rgba, width };
}

describe('QR code of the offsite pay-in', () => {
  for (const [name, cases] of CASES) {
    it(`reads back as the exact text from the data URL and from the page's SVG: ${name}`, async () => {
      for (const text of cases) {
        const [prefix, base64] = (await qrDataUrl(text)).split(',');
        assert.equal(prefix, 'data:image/png;base64');
        const png = Buffer.from(base64!, 'base64');
        assert.equal(readQrPng(png).text, text, 'PNG');
        const { width, height, header } = pngStructure(png);
        assert.equal(width, height);
        assert.deepEqual([...header.subarray(8)], [1, 0, 0, 0, 0], 'depth 1, greyscale, no interlace');
        // 4 pixels per module, 2 light modules of quiet zone around a symbol of 17 + 4 × version.
        assert.equal((width / 4 - 4 - 17) % 4, 0, `width ${width}`);

        const modules = svgModules(await qrSvg(text));
        assert.equal(modules.length * 4, width, 'the page shows the same symbol as the PNG');
        for (const edge of [0, 1, modules.length - 2, modules.length - 1]) {
          assert.ok(!modules[edge]!.some(Boolean) && !modules.some((row) => row[edge]), 'quiet zone');
        }
        const { rgba, width: svgWidth } = rgbaOf(modules, 3);
        assert.equal(readQr(rgba, svgWidth, svgWidth), text, 'SVG');
      }
    });
  }

  it('writes a valid 1-bit PNG of exactly the matrix it is given, at any scale and quiet zone', () => {
    const rnd = random(8);
    for (let n = 0; n < 60; n++) {
      const rows = encodeQR(pick(rnd, PRINTABLE, 1 + rnd(1500)), 'raw', { ecc: 'low', border: 1 + rnd(4) });
      const scale = 1 + rnd(n < 50 ? 8 : 16);
      const png = qrPng(rows, scale);
      const { width, height, header, raw } = pngStructure(png);
      assert.equal(width, rows.length * scale);
      assert.equal(height, width);
      assert.deepEqual([...header.subarray(8)], [1, 0, 0, 0, 0], 'depth 1, greyscale, no interlace');
      const stride = 1 + Math.ceil(width / 8);
      assert.equal(raw.length, stride * width);
      for (let y = 0; y < width; y++) {
        assert.equal(raw[y * stride], 0, 'filter None');
        for (let x = 0; x < width; x++) {
          const light = (raw[y * stride + 1 + (x >> 3)]! >> (7 - (x & 7))) & 1;
          assert.equal(light, rows[Math.floor(y / scale)]![Math.floor(x / scale)] ? 0 : 1, `pixel ${x},${y}`);
        }
      }
    }
    assert.throws(() => qrPng([[false]], 0), RangeError);
    assert.throws(() => qrPng([[false]], 17), RangeError);
  });

  it('answers the same data URL and SVG every time for the same text, and refuses a text too long', async () => {
    const text = 'upi://pay?pa=merchant%40bank&pn=Shop%20Name&am=500.00&cu=INR&tr=abc&tn=ord-1';
    const url = await qrDataUrl(text);
    assert.match(url, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    assert.equal(await qrDataUrl(text), url);
    assert.equal(await qrSvg(text), await qrSvg(text));
    await assert.rejects(qrDataUrl('x'.repeat(3000)));
  });
});
