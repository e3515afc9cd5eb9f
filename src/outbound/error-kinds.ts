/**
 * What went wrong with an outgoing HTTP request, in the words the attempt logs and the channels'
 * failures use: timeout, refused, reset, dns, tls, blocked_address or error.
 */

const CODE_KINDS: Record<string, string> = {
  ERR_BLOCKED_ADDRESS: 'blocked_address',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ETIMEDOUT: 'timeout',
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  UND_ERR_SOCKET: 'reset',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_NONAME: 'dns',
  ENETUNREACH: 'refused',
  EHOSTUNREACH: 'refused',
};

/** The error kind of a failed request, looking through undici's wrappers to the socket's error. */
export function errorKindOf(err: unknown): string {
  for (
    let e = err, depth = 0;
    e && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const { code, name } = e as { code?: unknown; name?: unknown };
    if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
    if (typeof code === 'string') {
      const kind = CODE_KINDS[code];
      if (kind) return kind;
      if (
        code.startsWith('ERR_TLS') ||
        code.startsWith('ERR_SSL') ||
        /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)
      )
        return 'tls';
    }
  }
  return 'error';
}
