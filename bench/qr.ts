/**
 * Micro-benchmark of the offsite pay-in's QR code: CPU time per `qrDataUrl` call over distinct,
 * realistic UPI intents. A tool for people, never part of the tests.
 *
 *   node --import tsx bench/qr.ts [calls per round, default 4000] [rounds, default 5]
 *
 * Two kinds of order number, as merchants send both: letters and digits mixed (`ORD-…`) and long
 * digit runs.
 */
import { randomInt } from 'node:crypto';
import { newPaymentId } from '../src/ids.ts';
import { qrDataUrl, upiIntent } from '../src/upi/upi.ts';

const calls = Number(process.argv[2] ?? 4000);
const rounds = Number(process.argv[3] ?? 5);

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const pick = (alphabet: string, n: number) =>
  Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('');

const ORDER_NOS: Record<string, () => string> = {
  mixed: () => `ORD-${pick(ALNUM, randomInt(12, 20))}`,
  digits: () => `${pick('0123456789', randomInt(16, 21))}`,
};

function intents(orderNo: () => string): string[] {
  return Array.from({ length: calls }, () =>
    upiIntent({
      payeeVpa: 'merchant@bank',
      payeeName: 'Shop Name',
      amount: randomInt(100, 10_000_000),
      currency: 'INR',
      paymentId: newPaymentId(),
      orderNo: orderNo(),
    }),
  );
}

for (const [kind, orderNo] of Object.entries(ORDER_NOS)) {
  const perCall: number[] = [];
  let bytes = 0;
  // The first round warms the JIT and the encoder's caches; it is not counted.
  for (let round = 0; round <= rounds; round++) {
    const texts = intents(orderNo);
    const start = process.cpuUsage();
    for (const text of texts) bytes += (await qrDataUrl(text)).length;
    const used = process.cpuUsage(start);
    if (round > 0) perCall.push((used.user + used.system) / calls);
  }
  perCall.sort((a, b) => a - b);
  const median = perCall[Math.floor(perCall.length / 2)]!;
  console.log(
    `${kind.padEnd(7)} order numbers: ${median.toFixed(1)} µs CPU per call (median of ${rounds} × ${calls}; ` +
      `range ${perCall[0]!.toFixed(1)}–${perCall.at(-1)!.toFixed(1)}), data URL ${Math.round(bytes / (calls * (rounds + 1)))} chars`,
  );
}
