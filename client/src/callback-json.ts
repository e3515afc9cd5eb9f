/**
 * Reading a callback body exactly enough to verify it: a tolerant parse (the interface's sample
 * bodies end with a trailing comma) and the raw text of each top-level value, because the
 * signature covers the amount *as written* (`500.00`), which `JSON.parse` would turn into 500.
 */

const WS = new Set([' ', '\t', '\n', '\r']);

/** Drops every comma that directly precedes `}` or `]` outside a string. */
export function stripTrailingCommas(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') {
        out += text[i + 1] ?? '';
        i++;
      } else if (c === '"') {
        inString = false;
      }
      continue;
    }
    if (c === '"') inString = true;
    if (c === ',') {
      let j = i + 1;
      while (j < text.length && WS.has(text[j]!)) j++;
      if (text[j] === '}' || text[j] === ']') continue;
    }
    out += c;
  }
  return out;
}

function skipWs(text: string, i: number): number {
  while (i < text.length && WS.has(text[i]!)) i++;
  return i;
}

function endOfString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

function endOfValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return endOfString(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j];
      if (d === '"') j = endOfString(text, j) - 1;
      else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return text.length;
  }
  let j = i;
  while (j < text.length && !WS.has(text[j]!) && text[j] !== ',' && text[j] !== '}' && text[j] !== ']') j++;
  return j;
}

/**
 * The top-level members of a JSON object, key → raw value text. `text` must already be valid
 * JSON (check with `JSON.parse` first). Null when it is not an object or a key repeats: with a
 * repeated key, which value counts depends on the parser, so such a body is never trusted.
 */
export function topLevelMembers(text: string): Map<string, string> | null {
  let i = skipWs(text, 0);
  if (text[i] !== '{') return null;
  const members = new Map<string, string>();
  i = skipWs(text, i + 1);
  if (text[i] === '}') return members;
  for (;;) {
    const keyEnd = endOfString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWs(text, keyEnd);
    if (text[i] !== ':') return null;
    i = skipWs(text, i + 1);
    const valueEnd = endOfValue(text, i);
    if (members.has(key)) return null;
    members.set(key, text.slice(i, valueEnd));
    i = skipWs(text, valueEnd);
    if (text[i] === ',') {
      i = skipWs(text, i + 1);
      continue;
    }
    return text[i] === '}' ? members : null;
  }
}

export interface ReadBody {
  /** The parsed object. */
  value: Record<string, unknown>;
  /** Raw text of each top-level value. */
  raw: Map<string, string>;
}

/** Parses a callback body, tolerating trailing commas. Null when it is not a JSON object or a key repeats. */
export function readBody(text: string): ReadBody | null {
  const cleaned = stripTrailingCommas(text);
  let value: unknown;
  try {
    value = JSON.parse(cleaned);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const raw = topLevelMembers(cleaned);
  return raw ? { value: value as Record<string, unknown>, raw } : null;
}
