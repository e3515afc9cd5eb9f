/** Fields of a provider's JSON body, read without trusting its types. */

/** A field that is a string or a number, as text; "" when it is anything else or missing. */
export function fieldText(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

/** A field that is an object, or an empty one. */
export function objectField(v: unknown): Record<string, unknown> {
  return (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
}
