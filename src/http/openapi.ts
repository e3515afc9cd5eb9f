/**
 * The published OpenAPI document (`/openapi.json`, `/docs`), made from the routes' schemas and then
 * cleaned for the generators merchants feed it to: the validator's own keywords (`plainText`,
 * `urlParses`, `urlSchemes`, `emailAddress`, `maxDecimalPlaces`, `exactlyOne`) become OpenAPI 3.0 terms or go,
 * `exclusiveMinimum` is written the 3.0 way, every operation gets an `operationId` (the SDK's method
 * names) and its security, callbacks their summary, and the document names its server and licence. Redocly's recommended
 * rules check the result (test/http/openapi-lint.test.ts).
 */

/** The SDK's method names (client/src/operations.ts), and names for the operations endpoints. */
const OPERATION_IDS: Record<string, string> = {
  'POST /payments/onsite/payin': 'createOnsitePayin',
  'POST /payments/offsite/payin': 'createOffsitePayin',
  'POST /payments/p2p/payin': 'createP2PPayin',
  'POST /payments/payout': 'createPayout',
  'POST /payments/payin_status': 'getPayinStatus',
  'POST /payments/payout_status': 'getPayoutStatus',
  'POST /payments/refund': 'createRefund',
  'POST /payments/refund_status': 'refundStatus',
  'POST /wallet/balance': 'getBalance',
  'POST /callbacks/resend': 'resendCallback',
  'POST /sandbox/payin/complete': 'completeSandboxPayin',
  'POST /sandbox/payout/complete': 'completeSandboxPayout',
  'POST /sandbox/refund/complete': 'completeSandboxRefund',
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /openapi.json': 'getOpenApiDocument',
  'GET /metrics': 'getMetrics',
  'POST /channels/setu/notifications': 'receiveSetuNotification',
  'POST /channels/cashfree/notifications': 'receiveCashfreeNotification',
};

/** Endpoints that take no API key. */
const OPEN = new Set([
  '/healthz',
  '/readyz',
  '/openapi.json',
  '/metrics',
  // Signed by the provider instead.
  '/channels/setu/notifications',
  '/channels/cashfree/notifications',
]);

type Json = Record<string, unknown>;

interface Operation {
  operationId?: string;
  summary?: string;
  security?: Json[];
  callbacks?: Record<string, Record<string, { post?: Operation }>>;
}

/** The parts of an OpenAPI 3.0 document this module touches. */
export interface OpenApiDocument {
  info: Json;
  servers?: { url: string }[];
  security?: Json[];
  paths?: Record<string, { get?: Operation; post?: Operation } | undefined>;
}

/** A schema with the validator's keywords turned into OpenAPI 3.0's, recursively. */
function cleanSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(cleanSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    // `properties` maps names to schemas: the names are the API's, never keywords.
    if (key === 'properties' && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([n, s]) => [n, cleanSchema(s)]));
      continue;
    }
    switch (key) {
      // `exactlyOne` is said in the schema's description: OpenAPI 3.0 has no term generators read well.
      case 'plainText':
      case 'maxDecimalPlaces':
      case 'exactlyOne':
        break;
      case 'urlParses':
        out.format = 'uri';
        break;
      case 'urlSchemes':
        out.pattern = `^(${(value as string[]).join('|')})://`;
        break;
      case 'emailAddress':
        out.format = 'email';
        break;
      case 'exclusiveMinimum':
        if (typeof value === 'number') {
          out.minimum = value;
          out.exclusiveMinimum = true;
        } else out[key] = value;
        break;
      default:
        out[key] = cleanSchema(value);
    }
  }
  return out;
}

/** Cleans every schema in the document and completes each operation. */
export function publishedDocument(doc: OpenApiDocument, publicUrl: string): OpenApiDocument {
  const clean = cleanSchema(doc) as OpenApiDocument;
  clean.servers = [{ url: publicUrl }];
  clean.info.license = { name: 'MIT', url: 'https://opensource.org/licenses/MIT' };
  clean.security = [{ bearerAuth: [] }];
  for (const [path, item] of Object.entries(clean.paths ?? {})) {
    for (const method of ['get', 'post'] as const) {
      const op = item?.[method];
      if (!op) continue;
      op.operationId ??= OPERATION_IDS[`${method.toUpperCase()} ${path}`];
      if (OPEN.has(path)) op.security = [];
      for (const callbacks of Object.values(op.callbacks ?? {}))
        for (const target of Object.values(callbacks)) {
          if (!target.post) continue;
          // @fastify/swagger keeps only a callback's requestBody and responses.
          target.post.summary = path.endsWith('/refund')
            ? 'The final status of a refund, sent to your callback URL'
            : 'The final status of a transaction, sent to your callback URL';
          target.post.security = [];
        }
    }
  }
  return clean;
}
