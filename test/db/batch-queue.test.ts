/**
 * The group commit behind payout creation: what arrives together is written together, results go
 * back to the right callers, and a failing batch is split so that only the failing item fails.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchQueue } from '../../src/db/batch-queue.ts';

describe('BatchQueue', () => {
  it('writes what arrives together in one batch, and what arrives meanwhile in the next', async () => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    const batcher = new BatchQueue<number, string>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return items.map((i) => `r${i}`);
    });
    const first = [1, 2, 3].map((i) => batcher.submit(i));
    await new Promise((resolve) => setImmediate(resolve));
    // The first batch is being written: these wait for it, then go together.
    const second = [4, 5].map((i) => batcher.submit(i));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(batches, [[1, 2, 3]]);
    release();
    assert.deepEqual(await Promise.all([...first, ...second]), ['r1', 'r2', 'r3', 'r4', 'r5']);
    assert.deepEqual(batches, [
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('caps a batch at maxBatch items', async () => {
    const sizes: number[] = [];
    const batcher = new BatchQueue<number, number>(async (items) => {
      sizes.push(items.length);
      return items;
    }, 4);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.submit(i)));
    assert.deepEqual(results, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(sizes, [4, 4, 2]);
  });

  it('writes a failed batch again one item at a time, so that only the bad item fails', async () => {
    const batches: number[][] = [];
    const batcher = new BatchQueue<number, number>(async (items) => {
      batches.push(items);
      if (items.includes(13)) throw new Error('13 cannot be written');
      return items.map((i) => i * 2);
    });
    const settled = await Promise.allSettled([1, 13, 3].map((i) => batcher.submit(i)));
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
      [2, '13 cannot be written', 6],
    );
    assert.deepEqual(batches, [[1, 13, 3], [1], [13], [3]]);
  });

  it("fails every item of a batch at once when the failure is the store's, without trying each again", async () => {
    let calls = 0;
    const batcher = new BatchQueue<number, number>(async () => {
      calls++;
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    const settled = await Promise.allSettled([1, 2, 3].map((i) => batcher.submit(i)));
    assert.deepEqual(
      settled.map((s) => (s.status === 'rejected' ? (s.reason as { code?: string }).code : 'fulfilled')),
      ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED'],
    );
    assert.equal(calls, 1);
  });

  it('does not split a failed batch when told not to', async () => {
    const batches: number[][] = [];
    const batcher = new BatchQueue<number, number>(
      async (items) => {
        batches.push(items);
        throw new Error('read failed');
      },
      100,
      () => false,
    );
    const settled = await Promise.allSettled([1, 2].map((i) => batcher.submit(i)));
    assert.deepEqual(
      settled.map((s) => s.status),
      ['rejected', 'rejected'],
    );
    assert.deepEqual(batches, [[1, 2]]);
  });
});
