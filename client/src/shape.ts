/**
 * A small machine-readable description of JSON shapes: field names, types, required-ness and
 * nullability. The SDK describes every request and response with it (see `operations.ts`), the
 * TypeScript interfaces in `types.ts` are checked against these descriptions at compile time, and
 * a test compares them with the gateway's `/openapi.json`, so the three cannot drift apart.
 */

export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';

/** One field, or a whole body. `T` is the TypeScript type it stands for (never set at run time). */
export interface Field<T = unknown, R extends boolean = boolean> {
  readonly type: FieldType;
  readonly required: R;
  readonly nullable: boolean;
  /** Members of an object; absent for a free-form object (a map). */
  readonly fields?: Readonly<Record<string, Field>>;
  /** Element of an array. */
  readonly items?: Field;
  /** The only values the field takes (for a status, the values the API documents). */
  readonly enum?: readonly (string | boolean)[];
  readonly deprecated?: boolean;
  /** Phantom: carries the TypeScript type for `Infer`. */
  readonly _type?: T;
}

type Fields = Record<string, Field>;

type RequiredKeys<F extends Fields> = {
  [K in keyof F]: F[K] extends Field<unknown, true> ? K : never;
}[keyof F];
type OptionalKeys<F extends Fields> = Exclude<keyof F, RequiredKeys<F>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The TypeScript type a description stands for. */
export type Infer<S> = S extends Field<infer T> ? T : never;

type ObjectOf<F extends Fields> = Simplify<
  { [K in RequiredKeys<F>]: Infer<F[K]> } & { [K in OptionalKeys<F>]?: Infer<F[K]> }
>;

export function str(): Field<string, true>;
export function str<const V extends readonly string[]>(values: V): Field<V[number], true>;
export function str(values?: readonly string[]): Field<string, true> {
  return values
    ? { type: 'string', required: true, nullable: false, enum: values }
    : { type: 'string', required: true, nullable: false };
}

export function num(): Field<number, true> {
  return { type: 'number', required: true, nullable: false };
}

export function int(): Field<number, true> {
  return { type: 'integer', required: true, nullable: false };
}

export function bool(): Field<boolean, true>;
export function bool<const V extends boolean>(value: V): Field<V, true>;
export function bool(value?: boolean): Field<boolean, true> {
  return value === undefined
    ? { type: 'boolean', required: true, nullable: false }
    : { type: 'boolean', required: true, nullable: false, enum: [value] };
}

export function obj<F extends Fields>(fields: F): Field<ObjectOf<F>, true> {
  return { type: 'object', required: true, nullable: false, fields };
}

/** A free-form object (string keys to anything). */
export function map(): Field<Record<string, unknown>, true> {
  return { type: 'object', required: true, nullable: false };
}

export function arr<T>(items: Field<T>): Field<T[], true> {
  return { type: 'array', required: true, nullable: false, items };
}

/** The field may be left out. */
export function optional<T>(field: Field<T>): Field<T, false> {
  return { ...field, required: false };
}

/** The field may be null. */
export function nullable<T, R extends boolean>(field: Field<T, R>): Field<T | null, R> {
  return { ...field, nullable: true };
}

/** The field is deprecated (still accepted). */
export function deprecated<T, R extends boolean>(field: Field<T, R>): Field<T, R> {
  return { ...field, deprecated: true };
}

/** True when A and B are assignable both ways: the same fields, the same required-ness, the same types. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
