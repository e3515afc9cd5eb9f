/**
 * The money helpers: amounts are integer paise inside, rupees with at most two decimals
 * at the edges, never a float in arithmetic.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decimalPlaces,
  feeFor,
  formatAmount,
  formatIndian,
  parseAmountText,
  toPaise,
  toRupees,
} from '../src/money.ts';

describe('money', () => {
  it('counts the decimals a JSON number was written with', () => {
    const cases: [number, number][] = [
      [500, 0],
      [500.5, 1],
      [500.05, 2],
      [0.01, 2],
      [1000.1, 1],
      [999.99, 2],
      [1.001, 3],
      [0.1 + 0.2, 17],
      [1e21, 0],
      [1e-7, 7],
      [1.5e-7, 8],
      [123456789012.34, 2],
      [5e-324, 324],
    ];
    for (const [n, places] of cases) assert.equal(decimalPlaces(n), places, String(n));
  });

  it('turns rupees into exact paise and back', () => {
    const cases: [number, number][] = [
      [0.01, 1],
      [0.29, 29],
      [1.01, 101],
      [4.35, 435],
      [999.99, 99_999],
      [1000.1, 100_010],
      [10_000_000, 1_000_000_000],
      [99_999_999_999.99, 9_999_999_999_999],
    ];
    for (const [rupees, paise] of cases) {
      assert.equal(toPaise(rupees), paise, String(rupees));
      assert.equal(toRupees(paise), rupees);
    }
  });

  it('formats paise with exactly two decimals, for callbacks and UPI intents', () => {
    assert.equal(formatAmount(50_000), '500.00');
    assert.equal(formatAmount(50_050), '500.50');
    assert.equal(formatAmount(1), '0.01');
    assert.equal(formatAmount(0), '0.00');
    assert.equal(formatAmount(100_010), '1000.10');
    assert.equal(formatAmount(-250), '-2.50');
    assert.equal(formatAmount(9_999_999_999_999), '99999999999.99');
  });

  it('groups digits the Indian way for people', () => {
    assert.equal(formatIndian(12_345_650), '₹1,23,456.50');
    assert.equal(formatIndian(100), '₹1.00');
    assert.equal(formatIndian(99_999), '₹999.99');
    assert.equal(formatIndian(100_000), '₹1,000.00');
    assert.equal(formatIndian(1_000_000_000), '₹1,00,00,000.00');
  });

  it('parses operator amounts as text, refusing anything but plain decimals with at most 2 places', () => {
    assert.equal(parseAmountText('1000.00'), 100_000);
    assert.equal(parseAmountText('1000'), 100_000);
    assert.equal(parseAmountText(' 0.5 '), 50);
    assert.equal(parseAmountText('0.01'), 1);
    assert.equal(parseAmountText('1000.10'), 100_010);
    for (const bad of [
      '',
      '-1',
      '1.001',
      '1,000.00',
      '1e3',
      'abc',
      '.5',
      '1.',
      '12345678901234',
      'Infinity',
      '0x10',
    ]) {
      assert.equal(parseAmountText(bad), null, bad);
    }
  });

  it('rounds a fee down to the paisa, exactly even for very large amounts', () => {
    assert.equal(feeFor(100_000, 250), 2_500);
    assert.equal(feeFor(33_333, 250), 833);
    assert.equal(feeFor(1, 250), 0);
    assert.equal(feeFor(99_999, 175), 1_749);
    assert.equal(feeFor(100_000, 0), 0);
    assert.equal(feeFor(100_000, 10_000), 100_000);
    // paise * bps is above 2^53 here; a float product would round the fee up by a paisa.
    assert.equal(feeFor(8_104_523_725_354, 2_387), 1_934_549_813_241);
    assert.equal(feeFor(9_999_999_999_999, 9_999), 9_998_999_999_999);
  });
});
