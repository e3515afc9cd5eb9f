/**
 * The merchant server of the callbacks scenario, run as its own process so that the load
 * generator cannot delay its clock: answers every callback 200 and records when each payment_id
 * arrived. While "held" it keeps the answers back, so that a backlog builds up in the gateway.
 *
 * `node --import tsx bench/receiver.ts` with RECEIVER_PORT. Control paths (not callbacks):
 * GET /__receipts, POST /__hold, POST /__release, GET /readyz.
 */
import http from 'node:http';

const port = Number(process.env.RECEIVER_PORT ?? 0);
/** payment_id → arrival time (epoch ms) of its first callback. */
const receipts = new Map<string, number>();
let duplicates = 0;
const samples: { body: string; token: string; attempt: string; headers: Record<string, string> }[] = [];
let held: http.ServerResponse[] = [];
let holding = false;

function answer(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const url = req.url ?? '';
    if (url === '/readyz') return answer(res, 200, '{"ok":true}');
    if (url === '/__receipts') {
      return answer(res, 200, JSON.stringify({ receipts: [...receipts], duplicates, samples }));
    }
    if (url === '/__hold') {
      holding = true;
      return answer(res, 200, '{}');
    }
    if (url === '/__release') {
      holding = false;
      const waiting = held;
      held = [];
      for (const r of waiting) answer(r, 200, '{"ok":true}');
      return answer(res, 200, JSON.stringify({ released: waiting.length, at: Date.now() }));
    }
    const body = Buffer.concat(chunks).toString();
    let paymentId = '';
    try {
      paymentId = String((JSON.parse(body) as { payment_id?: unknown }).payment_id ?? '');
    } catch {
      // counted as a receipt without an id
    }
    if (receipts.has(paymentId)) duplicates++;
    else receipts.set(paymentId, at);
    if (samples.length < 5) {
      samples.push({
        body,
        token: String(req.headers['x-verification-token'] ?? ''),
        attempt: String(req.headers['x-callback-attempt'] ?? ''),
        headers: Object.fromEntries(
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [
            h,
            String(req.headers[h] ?? ''),
          ]),
        ),
      });
    }
    if (holding) held.push(res);
    else answer(res, 200, '{"ok":true}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  for (const r of held) answer(r, 200, '{}');
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
