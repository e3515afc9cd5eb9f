/**
 * A UPI link's QR code drawn in a terminal, for the operator to scan (`channels rehearse`): two rows
 * of modules per line in half blocks, black on white whatever the terminal's own colours, with the
 * quiet zone scanners need.
 */
import encodeQR from 'qr';

const QUIET_ZONE = 4;
const BLACK_ON_WHITE = '\x1b[30;47m';
const RESET = '\x1b[0m';

export function terminalQr(text: string): string {
  const rows = encodeQR(text, 'raw', { ecc: 'low', border: QUIET_ZONE });
  const lines: string[] = [];
  for (let r = 0; r < rows.length; r += 2) {
    const top = rows[r]!;
    const bottom = rows[r + 1] ?? top.map(() => false);
    const cells = top.map((dark, c) => (dark && bottom[c] ? '█' : dark ? '▀' : bottom[c] ? '▄' : ' '));
    lines.push(`${BLACK_ON_WHITE}${cells.join('')}${RESET}`);
  }
  return lines.join('\n');
}
