/**
 * What a page must satisfy on a phone (CONTRACT §11), measured in the browser: nothing scrolls or
 * spills sideways, every table cell is on screen, and chart text is drawn at 11 px or more.
 */
import type { Page } from 'playwright-core';

/** One element whose content is wider than its box: what it is, and by how much. */
export interface Overflow {
  element: string;
  scrollWidth: number;
  clientWidth: number;
}

/**
 * Every element (the document's root included) whose scrollWidth exceeds its clientWidth, with
 * every `<details>` opened so that folded content (the phone's menu among it) is measured too; they
 * are folded again afterwards. Inline boxes measure 0 and
 * cannot appear; an element that clips (overflow: hidden) what it cannot fit is listed like one
 * that scrolls.
 */
export async function sidewaysOverflow(page: Page): Promise<Overflow[]> {
  return page.evaluate(() => {
    const closed = [...document.querySelectorAll('details')].filter((d) => !d.open);
    for (const d of closed) d.open = true;
    const found = [...document.querySelectorAll('*')]
      .filter((el) => el.scrollWidth > el.clientWidth && el.clientWidth + el.scrollWidth > 0)
      .filter((el) => !(el instanceof SVGElement) || el instanceof SVGSVGElement)
      .map((el) => ({
        // Inline, not a helper: a named function would be compiled to a call the page lacks.
        element: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : ''} "${el.getAttribute('aria-label') ?? (el.textContent ?? '').trim().slice(0, 40)}"`,
        scrollWidth: el.scrollWidth,
        clientWidth: el.clientWidth,
      }));
    for (const d of closed) d.open = false;
    return found;
  });
}

/** Per table with cells not wholly inside the viewport's width: how many of its cells, and which columns. */
export async function cellsOffScreen(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out: string[] = [];
    for (const table of document.querySelectorAll('table')) {
      const head = [...table.querySelectorAll('thead th')].map((th) => (th.textContent ?? '').trim());
      const columns = new Set<string>();
      let off = 0;
      let all = 0;
      for (const tr of table.querySelectorAll('tbody tr'))
        for (const [i, td] of [...tr.querySelectorAll('td')].entries()) {
          const box = td.getBoundingClientRect();
          if (box.width === 0) continue;
          all++;
          if (box.left < 0 || box.right > width + 0.5) {
            off++;
            columns.add(head[i] ?? String(i));
          }
        }
      if (off > 0)
        out.push(
          `${table.closest('[aria-label]')?.getAttribute('aria-label')}: ${off} of ${all} cells off screen (${[...columns].join(', ')})`,
        );
    }
    return out;
  });
}

/**
 * For each row of the table in the region named `region`: the text of its `Amount` and `Status`
 * cells and whether each is drawn inside the viewport (left ≥ 0, right ≤ the viewport's width).
 */
export async function amountAndStatus(
  page: Page,
  region: string,
): Promise<{ amount: string; status: string; amountOnScreen: boolean; statusOnScreen: boolean }[]> {
  return page.evaluate((name) => {
    const table = document.querySelector(`[aria-label="${name}"] table`);
    if (!table) return [];
    const width = document.documentElement.clientWidth;
    const head = [...table.querySelectorAll('thead th')].map((th) => (th.textContent ?? '').trim());
    const range = document.createRange();
    return [...table.querySelectorAll('tbody tr')].map((tr) => {
      const [amount, status] = [head.indexOf('Amount'), head.indexOf('Status')].map((i) => {
        const td = tr.querySelectorAll('td')[i]!;
        // The drawn text, not the cell's box: a cell can be on screen with its content clipped off it.
        range.selectNodeContents(td);
        const box = range.getBoundingClientRect();
        return {
          text: (td.textContent ?? '').trim(),
          onScreen: box.width > 0 && box.left >= 0 && box.right <= width + 0.5,
        };
      });
      return {
        amount: amount!.text,
        status: status!.text,
        amountOnScreen: amount!.onScreen,
        statusOnScreen: status!.onScreen,
      };
    });
  }, region);
}

/**
 * The size at which each visible text of each chart is drawn, in CSS pixels: its computed font
 * size times the scale its SVG is drawn at (a viewBox drawn narrower than it is wide shrinks it).
 */
export async function chartTextSizes(page: Page): Promise<{ text: string; px: number }[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('svg text')]
      .filter((t) => (t as SVGGraphicsElement).getBoundingClientRect().width > 0)
      .map((t) => {
        const ctm = (t as SVGGraphicsElement).getScreenCTM()!;
        const scale = Math.hypot(ctm.a, ctm.b);
        return {
          text: (t.textContent ?? '').trim(),
          px: Math.round(parseFloat(getComputedStyle(t).fontSize) * scale * 100) / 100,
        };
      }),
  );
}
