/** Raw HTTP over a socket, for what `inject()` and fetch cannot send: malformed bytes, slow bodies. */
import net from 'node:net';

export interface RawAnswer {
  /** Everything the server wrote before it closed the connection (or the wait ran out). */
  text: string;
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the first byte sent until the server closed the connection, or null. */
  closedAfterMs: number | null;
}

/**
 * Sends `chunks` (each after `gapMs`) to `baseUrl`'s host and port, and collects the answer until
 * the server closes the connection or `waitMs` passes.
 */
export function rawRequest(
  baseUrl: string,
  chunks: (string | Buffer)[],
  opts: { gapMs?: number; waitMs?: number } = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const waitMs = opts.waitMs ?? 5000;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const received: Buffer[] = [];
    const started = Date.now();
    let closedAfterMs: number | null = null;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parse(Buffer.concat(received).toString('latin1'), closedAfterMs));
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (d) => received.push(d));
    socket.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET') return;
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      closedAfterMs = Date.now() - started;
      finish();
    });
    socket.on('connect', async () => {
      for (const [i, chunk] of chunks.entries()) {
        if (i > 0 && opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
        if (socket.destroyed) return;
        socket.write(chunk);
      }
    });
  });
}

function parse(text: string, closedAfterMs: number | null): RawAnswer {
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end === -1 ? '' : text.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return { text, status: status ? Number(status) : null, headers, body, closedAfterMs };
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol === -1) return out;
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 4 + size);
  }
}
