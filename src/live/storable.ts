/**
 * What a provider sent, in a form both databases can store and read as it is. PostgreSQL's text
 * holds no NUL, and its jsonb (through which batched rows travel, `db/json-records.ts`) holds
 * neither `\u0000` nor a lone surrogate; SQLite takes them all. Each such character becomes
 * U+FFFD, in stored text and in a parsed body alike, so that a notification is stored and applied
 * the same way on both databases; the exact bytes are kept apart (`raw_base64`).
 */

/** NUL, a high surrogate not followed by a low one, or a low surrogate not after a high one. */
// eslint-disable-next-line no-control-regex -- NUL is what PostgreSQL refuses
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` with every character the databases cannot hold replaced by U+FFFD. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\ufffd');
}

/**
 * The JSON object `text` holds, with the same replacement in every string value (keys are only
 * looked up, never stored); null when it is not a JSON object (or nests too deep to walk).
 */
export function parseStorable(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text, (_key, value: unknown) =>
      typeof value === 'string' ? storableText(value) : value,
    );
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The raw body as stored text, and its exact bytes in base64 when the text is not exactly them. */
export function storedBody(raw: Buffer): { body: string; rawBase64: string | null } {
  const body = storableText(raw.toString('utf8'));
  return { body, rawBase64: Buffer.from(body, 'utf8').equals(raw) ? null : raw.toString('base64') };
}
