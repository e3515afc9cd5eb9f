/**
 * The served `/openapi.json` against Redocly's recommended rules (`@redocly/cli`, pinned): what
 * merchants' client generators read must carry no errors: no validator keywords, OpenAPI 3.0's
 * own spelling of each constraint, an operationId and security on every operation.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { useGateway } from '../support/harness.ts';
import { ROOT } from '../support/process.ts';

const REDOCLY = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

interface Report {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

describe('the published OpenAPI document', () => {
  const gw = useGateway('sqlite', { env: { PUBLIC_URL: 'https://pay.paygate.dev' } });

  it("passes Redocly's recommended rules without an error", async () => {
    const res = await gw().app.inject({ url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = JSON.parse(res.body);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      fs.writeFileSync(file, res.body);
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [REDOCLY, 'lint', '--extends', 'recommended', '--format', 'json', file],
        {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
          maxBuffer: 16 * 1024 * 1024,
        },
      ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const report = JSON.parse(stdout) as Report;
      const errors = report.problems.filter((p) => p.severity === 'error');
      assert.deepEqual(
        errors.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`),
        [],
      );
      assert.equal(report.totals.errors, 0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    // What the cleaning is for, checked on the document itself.
    const text = JSON.stringify(doc);
    for (const keyword of ['plainText', 'urlParses', 'urlSchemes', 'emailAddress', 'maxDecimalPlaces'])
      assert.ok(!text.includes(`"${keyword}"`), `${keyword} leaks into the document`);
    const amount =
      doc.paths['/payments/payout'].post.requestBody.content['application/json'].schema.properties.money
        .properties.amount;
    assert.deepEqual([amount.minimum, amount.exclusiveMinimum], [0, true]);
    assert.deepEqual(doc.servers, [{ url: 'https://pay.paygate.dev' }]);
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap(
      (item) => Object.values(item).map((op) => op.operationId),
    );
    assert.ok(
      ids.every((id) => typeof id === 'string' && id.length > 0),
      ids.join(', '),
    );
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    // Swagger UI: every request body has an example to try, and pay-ins come first.
    for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const op of Object.values(item))
        if (op.requestBody) {
          // One example, or several named ones (a status query: by payment_id, by order number).
          const body = op.requestBody.content['application/json'];
          assert.ok(
            body.example !== undefined || Object.keys(body.examples ?? {}).length > 0,
            `${p} example`,
          );
        }
    const tags = (doc.tags as { name: string }[]).map((t) => t.name);
    assert.deepEqual([tags[0], tags.at(-1)], ['Pay-ins', 'Operations']);
  });

  it('answers GET / with a page that links the console, the reference, the document and the health check', async () => {
    const res = await gw().app.inject({ url: '/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    for (const href of ['dashboard', 'docs', 'openapi.json', 'healthz'])
      assert.match(res.body, new RegExp(`<a href="${href}">`), href);
    for (const href of ['docs/', 'openapi.json', 'healthz'])
      assert.equal((await gw().app.inject({ url: `/${href}` })).statusCode, 200, href);
    const console = await gw().app.inject({ url: '/dashboard' });
    assert.equal(console.headers.location, '/dashboard/sign-in');
  });

  it('serves /docs under the project name, without the framework logo', async () => {
    const page = await gw().app.inject({ url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>Paygate API<\/title>/);
    const init = await gw().app.inject({ url: '/docs/static/swagger-initializer.js' });
    assert.equal(init.statusCode, 200);
    const frameworkLogo = fs
      .readFileSync(path.join(ROOT, 'node_modules/@fastify/swagger-ui/static/logo.svg'))
      .toString('base64');
    assert.ok(!init.body.includes(frameworkLogo), 'the framework logo is not used');
    assert.match(init.body, /data:image\/svg\+xml;base64,/);
  });
});
