/** The SDK's version, as client/package.json says; sent in the User-Agent. */
import { readFileSync } from 'node:fs';

// client/src/version.ts and client/dist/version.js both sit one level below package.json.
export const SDK_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
