/**
 * Turns the schema validator's (ajv's) errors into shape B, with pydantic v2 `type` words, and
 * adds the keywords the API's rules need that JSON Schema lacks: decimal places of a number,
 * the scheme of a URL, an e-mail address and text that can be stored and encoded.
 */
import type { Ajv, ErrorObject } from 'ajv';
import { decimalPlaces } from '../money.ts';
import type { ValidationIssue } from '../errors.ts';

const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** Registers Paygate's keywords on the ajv instance Fastify uses. */
export function addKeywords(ajv: Ajv): Ajv {
  ajv.addKeyword({
    keyword: 'maxDecimalPlaces',
    type: 'number',
    schemaType: 'number',
    validate: (max: number, data: number) => Number.isFinite(data) && decimalPlaces(data) <= max,
    errors: false,
  });
  ajv.addKeyword({
    keyword: 'urlParses',
    type: 'string',
    schemaType: 'boolean',
    // A web URL needs a host; another scheme (javascript:, ftp:) is the scheme keyword's to report.
    validate: (_: boolean, data: string) => {
      const url = parseUrl(data);
      return url !== null && (!/^https?:$/.test(url.protocol) || url.hostname !== '');
    },
    errors: false,
  });
  ajv.addKeyword({
    keyword: 'urlSchemes',
    type: 'string',
    schemaType: 'array',
    validate: (schemes: string[], data: string) => {
      const url = parseUrl(data);
      return url === null || schemes.includes(url.protocol.slice(0, -1));
    },
    errors: false,
  });
  // Text that is stored and sent on must be something storage and URLs can carry: PostgreSQL
  // refuses U+0000, and an unpaired surrogate cannot be encoded (encodeURIComponent throws).
  ajv.addKeyword({
    keyword: 'plainText',
    type: 'string',
    schemaType: 'boolean',
    validate: (_: boolean, data: string) => !data.includes('\u0000') && !LONE_SURROGATE.test(data),
    errors: false,
  });
  ajv.addKeyword({
    keyword: 'emailAddress',
    type: 'string',
    schemaType: 'boolean',
    validate: (_: boolean, data: string) => data.length <= 254 && EMAIL.test(data),
    errors: false,
  });
  // Two fields of which a body names exactly one, such as a status query's payment_id or order number.
  ajv.addKeyword({
    keyword: 'exactlyOne',
    type: 'object',
    schemaType: 'array',
    validate: (fields: string[], data: object) => fields.filter((f) => Object.hasOwn(data, f)).length === 1,
    errors: false,
  });
  return ajv;
}

function decodePointer(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function issueFor(
  error: ErrorObject,
  parentSchema: Record<string, unknown> | undefined,
): Omit<ValidationIssue, 'loc'> | null {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { type: 'missing', msg: 'Field required' };
    case 'type': {
      const expected =
        String(p.type)
          .split(',')
          .find((t) => t !== 'null') ?? 'null';
      if (expected === 'string') return { type: 'string_type', msg: 'Input should be a valid string' };
      if (expected === 'number' || expected === 'integer')
        return { type: 'float_type', msg: 'Input should be a valid number' };
      if (expected === 'object')
        return { type: 'model_type', msg: 'Input should be a valid dictionary or object' };
      return { type: `${expected}_type`, msg: `Input should be a valid ${expected}` };
    }
    case 'minLength':
      return {
        type: 'string_too_short',
        msg: `String should have at least ${String(p.limit)} character${p.limit === 1 ? '' : 's'}`,
      };
    case 'maxLength':
      return { type: 'string_too_long', msg: `String should have at most ${String(p.limit)} characters` };
    case 'exclusiveMinimum':
      return { type: 'greater_than', msg: `Input should be greater than ${String(p.limit)}` };
    case 'maximum':
      return { type: 'less_than_equal', msg: `Input should be less than or equal to ${String(p.limit)}` };
    case 'maxDecimalPlaces':
      return {
        type: 'decimal_max_places',
        msg: `Decimal input should have no more than ${String(parentSchema?.maxDecimalPlaces ?? 2)} decimal places`,
      };
    case 'pattern':
      return { type: 'string_pattern_mismatch', msg: `String should match pattern '${String(p.pattern)}'` };
    case 'urlParses':
      return { type: 'value_error', msg: 'Input should be a valid URL' };
    case 'urlSchemes': {
      const schemes = (parentSchema?.urlSchemes as string[] | undefined) ?? ['https'];
      return { type: 'url_scheme', msg: `URL scheme should be ${schemes.map((s) => `'${s}'`).join(' or ')}` };
    }
    case 'emailAddress':
      return { type: 'value_error', msg: 'value is not a valid email address' };
    case 'plainText':
      return { type: 'value_error', msg: 'String should be valid Unicode text without NUL characters' };
    case 'enum':
    case 'const': {
      const allowed = (p.allowedValues as unknown[] | undefined) ?? [p.allowedValue];
      return {
        type: 'value_error',
        msg: `Input should be ${allowed.map((v) => `'${String(v)}'`).join(' or ')}`,
      };
    }
    case 'exactlyOne': {
      const fields = error.schema as string[];
      return fields.some((f) => Object.hasOwn(error.data as object, f))
        ? { type: 'value_error', msg: `Give only one of ${fields.join(' and ')}` }
        : { type: 'missing', msg: `Field required (or ${fields.slice(1).join(' or ')} instead)` };
    }
    case 'anyOf':
    case 'oneOf':
    case 'if':
      // The branches report their own errors.
      return null;
    default:
      return { type: 'value_error', msg: error.message ?? 'Invalid value' };
  }
}

/** Shape B entries for every ajv error, in a stable order and without repeats. */
export function toValidationIssues(errors: ErrorObject[], context: string): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const error of errors) {
    const absentBody =
      error.keyword === 'type' &&
      error.instancePath === '' &&
      (error.data === undefined || error.data === null);
    const issue = absentBody
      ? { type: 'missing', msg: 'Field required' }
      : issueFor(error, error.parentSchema as Record<string, unknown> | undefined);
    if (!issue) continue;
    const loc = [context, ...decodePointer(error.instancePath)];
    if (error.keyword === 'required')
      loc.push(String((error.params as { missingProperty: string }).missingProperty));
    // Neither of the two: the first is reported missing, its message names the other.
    if (error.keyword === 'exactlyOne' && issue.type === 'missing') loc.push((error.schema as string[])[0]!);
    const key = `${loc.join('\u0000')}|${issue.type}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ loc, ...issue });
  }
  return issues;
}
