/**
 * A TCP proxy in front of PostgreSQL, so a test can take the database away from one gateway
 * without touching the server that other tests share: `refuse()` drops every connection and
 * stops listening (connection refused), `blackhole()` drops them and then accepts without ever
 * answering (a dead network), `forward()` brings it back on the same port. `retarget()` points it
 * at another server (a spec proxy's next fake).
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** The target URL with its host and port replaced by this proxy's. */
  url(target: string): string;
  refuse(): Promise<void>;
  blackhole(): Promise<void>;
  forward(): Promise<void>;
  /** Sends new connections to `port` on `host` and drops the current ones. */
  retarget(host: string, port: number): void;
  /** Lets the process end while the proxy listens. */
  unref(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number, port = 0): Promise<TcpProxy> {
  let mode: 'forward' | 'blackhole' = 'forward';
  let target = { host: targetHost, port: targetPort };
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (mode === 'blackhole') return;
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (p: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  const dropAll = () => {
    for (const s of sockets) s.destroy();
  };
  const bound = await listen(port);
  return {
    port: bound,
    url(target) {
      const u = new URL(target);
      u.hostname = '127.0.0.1';
      u.port = String(bound);
      return u.toString();
    },
    async refuse() {
      const closed = stopListening();
      dropAll();
      await closed;
    },
    async blackhole() {
      mode = 'blackhole';
      dropAll();
      if (!server.listening) await listen(bound);
    },
    async forward() {
      mode = 'forward';
      dropAll();
      if (!server.listening) await listen(bound);
    },
    unref() {
      server.unref();
    },
    retarget(host, port) {
      target = { host, port };
      dropAll();
    },
    async close() {
      const closed = stopListening();
      dropAll();
      await closed;
    },
  };
}
