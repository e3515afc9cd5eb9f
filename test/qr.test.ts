/**
 * The offsite pay-in's QR code (src/payins/qr*.ts): the symbol is module for module the one the
 * qrcode package's `QRCode.create(text, { errorCorrectionLevel: 'L' })` makes, which proves it a
 * standard symbol with the penalty-minimising mask; the PNG is valid (chunk CRCs, zlib checksum)
 * and shows exactly those modules. Texts come from a seeded generator, so a failure reproduces.
 */
import assert from 'node:assert/strict';
import { crc32, inflateSync } from 'node:zlib';
import { describe, it } from 'node:test';
import QRCode from 'qrcode';
import { qrModules } from '../src/payins/qr.ts';
import { qrPng } from '../src/payins/qr-png.ts';
import { qrDataUrl, upiIntent } from '../src/payins/upi.ts';

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

const intent = (rnd: (n: number) => number, orderNo: string) =>
  upiIntent({
    payeeVpa: rnd(2) ? 'merchant@bank' : `${pick(rnd, ALNUM, 8)}@paygate`,
    payeeName: rnd(2) ? 'Shop Name' : 'Test Shop & Co.',
    amount: 1 + rnd(1_000_000_000),
    currency: 'INR',
    paymentId: pick(rnd, ALNUM, 32),
    orderNo,
  });

/** Kinds of text, each taking a different path through segment choice and version. */
const CASES: [string, string[]][] = [
  [
    'UPI intents, letters and digits in the order number',
    texts(1, 300, (r) => intent(r, `ORD-${pick(r, ALNUM, 1 + r(30))}`)),
  ],
  [
    'UPI intents, all-digit order numbers (numeric segments)',
    texts(2, 300, (r) => intent(r, pick(r, DIGITS, 1 + r(36)))),
  ],
  ['printable ASCII of any length', texts(3, 200, (r) => pick(r, PRINTABLE, 1 + r(400)))],
  [
    'upper case, digits and symbols (alphanumeric segments)',
    texts(4, 200, (r) => pick(r, `${DIGITS}ABCXYZ $%*+-./:ab`, 1 + r(500))),
  ],
  ['mostly digits', texts(5, 150, (r) => pick(r, `${DIGITS}A`, 1 + r(800)))],
  ['long texts, up to the largest versions', texts(6, 40, (r) => pick(r, `${DIGITS}Aa:`, 1 + r(2900)))],
  ['non-ASCII (left to the package)', texts(7, 20, (r) => `upi://pay?pn=${pick(r, 'Şhöp ₹ 店', 1 + r(20))}`)],
];

describe('QR code of the offsite pay-in', () => {
  for (const [name, cases] of CASES) {
    it(`makes the qrcode package's symbol: ${name}`, () => {
      for (const text of cases) {
        const expected = QRCode.create(text, { errorCorrectionLevel: 'L' });
        const actual = qrModules(text);
        assert.equal(actual.version, expected.version, text);
        assert.equal(actual.maskPattern, expected.maskPattern, text);
        assert.equal(actual.size, expected.modules.size, text);
        assert.ok(Buffer.from(actual.data).equals(Buffer.from(expected.modules.data)), text);
      }
    });
  }

  it('fails as the package does on an empty or too long text', () => {
    assert.throws(() => qrModules(''), /No input text/);
    assert.throws(() => qrModules('x'.repeat(3000)), /too big/);
  });

  it('writes a valid 1-bit PNG of exactly those modules, at any scale and margin', () => {
    const rnd = random(8);
    for (let n = 0; n < 60; n++) {
      const symbol = qrModules(pick(rnd, PRINTABLE, 1 + rnd(1500)));
      const scale = 1 + rnd(n < 50 ? 8 : 16);
      const margin = rnd(5);
      const png = qrPng(symbol, scale, margin);
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
      const width = (symbol.size + 2 * margin) * scale;
      assert.equal(header.readUInt32BE(0), width);
      assert.equal(header.readUInt32BE(4), width);
      assert.deepEqual([...header.subarray(8)], [1, 0, 0, 0, 0], 'depth 1, greyscale, no interlace');
      // inflateSync checks the zlib stream, Adler-32 included.
      const raw = inflateSync(chunks[1]!.data);
      const stride = 1 + Math.ceil(width / 8);
      assert.equal(raw.length, stride * width);
      for (let y = 0; y < width; y++) {
        assert.equal(raw[y * stride], 0, 'filter None');
        for (let x = 0; x < width; x++) {
          const light = (raw[y * stride + 1 + (x >> 3)]! >> (7 - (x & 7))) & 1;
          const row = Math.floor(y / scale) - margin;
          const col = Math.floor(x / scale) - margin;
          const inside = row >= 0 && col >= 0 && row < symbol.size && col < symbol.size;
          assert.equal(light, inside && symbol.data[row * symbol.size + col] ? 0 : 1, `pixel ${x},${y}`);
        }
      }
    }
  });

  it('answers a data URL of that PNG, the same every time for the same text', async () => {
    const text = 'upi://pay?pa=merchant%40bank&pn=Shop%20Name&am=500.00&cu=INR&tr=abc&tn=ord-1';
    const url = await qrDataUrl(text);
    assert.match(url, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    assert.ok(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64').equals(qrPng(qrModules(text), 4, 2)));
    assert.equal(await qrDataUrl(text), url);
  });
});
