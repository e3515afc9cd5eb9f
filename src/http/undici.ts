/**
 * undici, loaded when a first HTTP call needs it rather than when the process starts. It is about
 * 110 modules; the CLI's commands, which make no HTTP call (all but `channels check`), start about
 * a fifth of a second sooner without them.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

let loaded: typeof Undici | undefined;

export function undici(): typeof Undici {
  loaded ??= createRequire(import.meta.url)('undici') as typeof Undici;
  return loaded;
}
