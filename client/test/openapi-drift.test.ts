/**
 * No drift between the SDK and the gateway: the SDK's description of every operation (field
 * names, types, required-ness, nullability; see client/src/operations.ts) is compared with the
 * OpenAPI document a real gateway serves, and its callback description with the gateway's
 * callback writer. The TypeScript interfaces are tied to the same description at compile time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callbackBody, refundCallbackBody } from '../../src/callbacks/signature.ts';
import { DATABASES } from '../../test/support/databases.ts';
import { skipFor, useGateway } from '../../test/support/harness.ts';
import { OPERATIONS } from '../src/index.ts';
import { ErrorEnvelope, PaygateCallback, RefundCallback, ValidationErrorBody } from '../src/operations.ts';
import type { Field } from '../src/shape.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document is untyped JSON, walked by hand
type Schema = Record<string, any>;

function resolve(doc: Schema, schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let hops = 0; s?.$ref && hops < 10; hops++) {
    s = (s.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<Schema | undefined>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return s;
}

/** A union of literals (TypeBox `Type.Union([Type.Literal(…), …])`) as one schema with an enum. */
function flattenUnion(doc: Schema, s: Schema): Schema {
  const branches = ((s.anyOf ?? s.oneOf) as Schema[] | undefined)?.map((b) => resolve(doc, b) ?? {});
  if (!branches) return s;
  const types = new Set(branches.filter((b) => b.type !== 'null').map((b) => b.type));
  const values = branches.flatMap((b) => b.enum ?? ('const' in b ? [b.const] : []));
  if (types.size !== 1) return s;
  return {
    ...s,
    type: [...types][0],
    nullable: branches.some((b) => b.type === 'null'),
    ...(values.length ? { enum: values } : {}),
  };
}

/** The JSON type and nullability of a schema, for OpenAPI 3.0 (`nullable`) and 3.1 (type lists). */
function typeOf(s: Schema): { type: string | undefined; nullable: boolean } {
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t: string) => t !== 'null');
    return { type: types.length === 1 ? types[0] : types.join('|'), nullable: s.type.includes('null') };
  }
  return { type: s.type, nullable: s.nullable === true };
}

/** Every difference between an SDK field description and a server schema, as readable lines. */
function differences(doc: Schema, sdk: Field, schema: Schema | undefined, at: string, top = true): string[] {
  const out: string[] = [];
  const found = resolve(doc, schema);
  if (!found) return [`${at}: the server documents no schema`];
  const s = flattenUnion(doc, found);
  const { type, nullable } = typeOf(s);
  if (type !== sdk.type) out.push(`${at}: type is ${sdk.type} in the SDK, ${type} on the server`);
  // The top level of a body is never null in what the SDK sends or reads.
  if (!top && nullable !== sdk.nullable)
    out.push(`${at}: nullable is ${sdk.nullable} in the SDK, ${nullable} on the server`);
  if (Boolean(sdk.deprecated) !== Boolean(s.deprecated))
    out.push(
      `${at}: deprecated is ${Boolean(sdk.deprecated)} in the SDK, ${Boolean(s.deprecated)} on the server`,
    );
  if (Array.isArray(s.enum)) {
    const server = s.enum
      .filter((v: unknown) => v !== null)
      .map(String)
      .sort();
    const mine = (sdk.enum ?? []).map(String).sort();
    if (server.join() !== mine.join())
      out.push(`${at}: values are [${mine}] in the SDK, [${server}] on the server`);
  }
  if (sdk.type === 'object' && type === 'object') {
    const props: Schema = s.properties ?? {};
    const required = new Set<string>(s.required ?? []);
    if (!sdk.fields) {
      if (Object.keys(props).length > 0)
        out.push(`${at}: the server lists fields (${Object.keys(props)}) the SDK treats as a map`);
    } else {
      for (const name of new Set([...Object.keys(sdk.fields), ...Object.keys(props)])) {
        const mine = sdk.fields[name];
        const path = `${at}.${name}`;
        if (!mine) out.push(`${path}: on the server, missing from the SDK`);
        else if (!(name in props)) out.push(`${path}: in the SDK, missing on the server`);
        else {
          if (mine.required !== required.has(name)) {
            out.push(
              `${path}: ${mine.required ? 'required' : 'optional'} in the SDK, ${required.has(name) ? 'required' : 'optional'} on the server`,
            );
          }
          out.push(...differences(doc, mine, props[name], path, false));
        }
      }
    }
  }
  if (sdk.type === 'array' && type === 'array' && sdk.items)
    out.push(...differences(doc, sdk.items, s.items, `${at}[]`, false));
  return out;
}

function jsonSchema(op: Schema | undefined, where: 'request' | string): Schema | undefined {
  const content = where === 'request' ? op?.requestBody?.content : op?.responses?.[where]?.content;
  return content?.['application/json']?.schema;
}

/** Every difference between the SDK and an OpenAPI document. */
function driftReport(doc: Schema): string[] {
  const out: string[] = [];
  const sdkPaths = new Set<string>(Object.values(OPERATIONS).map((o) => o.path));
  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
    if (/^\/(payments|wallet|sandbox|callbacks)\//.test(path) && item.post && !sdkPaths.has(path))
      out.push(`POST ${path}: documented by the server, no SDK method`);
  }
  for (const [name, op] of Object.entries(OPERATIONS)) {
    const post = doc.paths?.[op.path]?.post as Schema | undefined;
    if (!post) {
      out.push(`${name}: POST ${op.path} is not in the document`);
      continue;
    }
    out.push(...differences(doc, op.request, jsonSchema(post, 'request'), `${name} request`));
    out.push(...differences(doc, op.response, jsonSchema(post, '200'), `${name} 200`));
    for (const status of Object.keys(post.responses ?? {})) {
      if (Number(status) < 400) continue;
      const shape = status === '422' ? ValidationErrorBody : ErrorEnvelope;
      out.push(...differences(doc, shape, jsonSchema(post, status), `${name} ${status}`));
    }
    for (const status of ['401', '422', '429', '500', '503']) {
      if (!post.responses?.[status]) out.push(`${name}: no ${status} response documented`);
    }
  }
  return out;
}

for (const kind of DATABASES) {
  describe(`SDK and the gateway's OpenAPI document on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);
    const served = async () => {
      const res = await gw().app.inject({ method: 'GET', url: '/openapi.json' });
      assert.equal(res.statusCode, 200);
      return res.json() as Schema;
    };

    it('agree on every operation: paths, fields, types, required-ness, nullability and error shapes', async () => {
      assert.deepEqual(driftReport(await served()), []);
    });

    it('would notice a field dropped, made optional, retyped or added on either side', async () => {
      const doc = await served();
      const payout = doc.paths['/payments/payout'].post;
      const request = resolve(doc, jsonSchema(payout, 'request'))!;
      request.required = request.required.filter((r: string) => r !== 'receiver');
      const response = resolve(doc, jsonSchema(payout, '200'))!;
      delete response.properties.message;
      response.properties.amount.type = 'string';
      response.properties.fee = { type: 'number' };
      resolve(
        doc,
        jsonSchema(doc.paths['/payments/payin_status'].post, 'request'),
      )!.properties.payment_id.nullable = true;
      assert.deepEqual(driftReport(doc).sort(), [
        'createPayout 200.amount: type is number in the SDK, string on the server',
        'createPayout 200.fee: on the server, missing from the SDK',
        'createPayout 200.message: in the SDK, missing on the server',
        'createPayout request.receiver: required in the SDK, optional on the server',
        'getPayinStatus request.payment_id: nullable is false in the SDK, true on the server',
      ]);
    });

    it('agree on the callback body with the gateway writer', () => {
      const body = JSON.parse(
        callbackBody({
          paymentId: 'p'.repeat(32),
          merchantOrderNo: 'o-1',
          amount: 50_000,
          currency: 'INR',
          status: 'SUCCESS',
          utr: '123456789012',
        }),
      ) as Record<string, unknown>;
      const fields = PaygateCallback.fields!;
      assert.deepEqual(Object.keys(body).sort(), Object.keys(fields).sort());
      for (const [name, field] of Object.entries(fields)) assert.equal(typeof body[name], field.type, name);
    });

    it("agree on the refund callback body with the gateway's writer and its OpenAPI callback", async () => {
      const body = JSON.parse(
        refundCallbackBody({
          refundId: 'r'.repeat(32),
          paymentId: 'p'.repeat(32),
          merchantRefundNo: 'rf-1',
          amount: 2_500,
          currency: 'INR',
          status: 'FAILED',
          utr: '',
        }),
      ) as Record<string, unknown>;
      const fields = RefundCallback.fields!;
      assert.deepEqual(Object.keys(body).sort(), Object.keys(fields).sort());
      for (const [name, field] of Object.entries(fields)) assert.equal(typeof body[name], field.type, name);
      const doc = await served();
      const callback = doc.paths['/payments/refund'].post.callbacks.refundFinalStatus;
      const schema = Object.values<Schema>(callback)[0]!.post.requestBody.content['application/json'].schema;
      assert.deepEqual(differences(doc, RefundCallback, schema, 'refund callback'), []);
    });
  });
}
