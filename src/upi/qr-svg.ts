/**
 * A QR symbol as SVG markup: a light square and one dark stroke per run of dark modules, the
 * shape the hosted page has always drawn (the `qr` package's own SVG is a square per module,
 * several times larger, with a transparent quiet zone and no crisp edges).
 */

/**
 * SVG of a QR matrix: rows of modules (true = dark), quiet zone included, one unit per module;
 * the page sizes it with CSS.
 */
export function qrSvgMarkup(rows: readonly (readonly boolean[])[]): string {
  const span = rows.length;
  let path = '';
  for (let r = 0; r < span; r++) {
    const row = rows[r]!;
    let end = -1;
    for (let c = 0; c < span;) {
      if (!row[c]) {
        c++;
        continue;
      }
      const start = c;
      while (c < span && row[c]) c++;
      // A horizontal stroke one unit wide runs along the middle of its row.
      path += end < 0 ? `M${start} ${r + 0.5}` : `m${start - end} 0`;
      path += `h${c - start}`;
      end = c;
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${span} ${span}" shape-rendering="crispEdges">` +
    `<path fill="#ffffff" d="M0 0h${span}v${span}H0z"/><path stroke="#000000" d="${path}"/></svg>`
  );
}
