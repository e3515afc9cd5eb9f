/**
 * The house (STYLE.md): imports run one way, from a higher layer to a lower one, never around a
 * circle; no file in src/, sim/, bench/, scripts/ or client/ is over 400 lines and no function over 80
 * (migrations aside). `npm run structure` prints the same reading with every offender named.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readStructure } from '../../scripts/structure.ts';

const structure = readStructure(400, 80);

describe('the house', () => {
  it('has no import circle between files', () => {
    assert.deepEqual(structure.circles, []);
  });

  it('has no import from a lower layer into a higher one (type-only ones counted)', () => {
    assert.deepEqual(
      structure.upward.map((i) => `${i.from} -> ${i.to}`),
      [],
    );
  });

  it('has no file over 400 lines', () => {
    assert.deepEqual(structure.longFiles, []);
  });

  it('has no function over 80 lines', () => {
    assert.deepEqual(
      structure.longFunctions.map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`),
      [],
    );
  });

  it('reads the imports it judges: every room of src/ is found, and imports are seen', () => {
    // A reader that saw no import would pass the checks above for the wrong reason.
    assert.ok(structure.imports.length > 500, `${structure.imports.length} imports`);
    const rooms = structure.layers.flat();
    for (const room of ['src/db/', 'src/worker/', 'src/channels/', 'src/finality/', 'src/live/'])
      assert.ok(rooms.includes(room), room);
    assert.ok(structure.layers.length > 8, `${structure.layers.length} layers`);
  });
});
