/**
 * undici, loaded when first needed rather than when the process starts. It is about 110 modules;
 * the CLI's commands, which make no HTTP call (all but `channels check`), start about a fifth of a
 * second sooner without them. `paygate serve` loads it as it starts, so that no call waits for it.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

let loaded: typeof Undici | undefined;

export function undici(): typeof Undici {
  loaded ??= createRequire(import.meta.url)('undici') as typeof Undici;
  return loaded;
}
