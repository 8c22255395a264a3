// Charts as inline SVG built from the service's numbers (no chart library): a line chart for the
// ROC, precision–recall and reliability curves (with a reference diagonal where one means
// something), and a grouped bar chart for the score histograms. Every chart has a title and a text
// description for screen readers, a legend drawn with the same classes as what it names (so its
// colours cannot drift from the marks'), and a tooltip (`<title>`) with the numbers on every point
// and bar. Decision thresholds can be marked: as points on a curve where it passes through them,
// or as vertical lines on a score axis. Round axis tops for counts and shares are here too, so
// every page that charts per-period counts (Overview, a backtest's days) picks them alike.

const NS = 'http://www.w3.org/2000/svg';
// The curves and histograms are drawn on a 400-unit-wide canvas with 14-unit text (pages.css), so
// their labels stay about 11 px on a phone, where the chart is about 330 px wide.
const W = 400;
const H = 340;
const PAD = { left: 76, right: 16, top: 40, bottom: 54 };

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** Appends a tooltip to `node` (the browser shows a `<title>` child on hover). */
function tip<T extends SVGElement>(node: T, text: string): T {
  const t = el('title', {});
  t.textContent = text;
  node.append(t);
  return node;
}

/** A legend entry: `cls` is the class of what it names; `shape` how it is drawn. */
export interface LegendItem {
  name: string;
  cls: string;
  shape: 'box' | 'line' | 'dot';
}

/** A threshold marked on a chart: with `y`, a point on a curve (a circle, or a square for `block`);
 *  without, a vertical line at `x` across a score axis. `kind` is its class (`review`, `block`),
 *  `title` its tooltip, `data` its `data-` attributes. */
export interface Marker {
  kind: string;
  x: number;
  y?: number;
  title: string;
  data: Record<string, string>;
}

const tick = (v: number) => String(Math.round(v * 100) / 100);

/** An empty chart with its title and its description for screen readers. */
function chartSvg(width: number, height: number, cls: string, title: string, description: string): SVGSVGElement {
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', class: `chart ${cls}` });
  const t = el('title', {});
  t.textContent = title;
  const d = el('desc', {});
  d.textContent = description;
  svg.append(t, d);
  return svg;
}

/** The legend, one row above the plot from `left`; each swatch has the class of the marks it names. */
function drawLegend(svg: SVGSVGElement, legend: LegendItem[], left: number): void {
  let lx = left;
  for (const item of legend) {
    const g = el('g', { class: 'legend-item' });
    if (item.shape === 'box') g.append(el('rect', { x: lx, y: 10, width: 14, height: 14, class: `swatch ${item.cls}` }));
    else if (item.shape === 'dot') g.append(el('circle', { cx: lx + 7, cy: 17, r: 5, class: `swatch ${item.cls}` }));
    else g.append(el('line', { x1: lx, x2: lx + 16, y1: 17, y2: 17, class: `swatch ${item.cls}` }));
    const lt = el('text', { x: lx + 21, y: 22, class: 'legend' });
    lt.textContent = item.name;
    g.append(lt);
    svg.append(g);
    lx += 21 + item.name.length * 8.2 + 14;
  }
}

function frame(
  title: string,
  description: string,
  xLabel: string,
  yLabel: string,
  legend: LegendItem[],
  o: { yTop?: number; yFormat?: (v: number) => string } = {},
): { svg: SVGSVGElement; x: (v: number) => number; y: (v: number) => number } {
  const yTop = o.yTop ?? 1;
  const yFormat = o.yFormat ?? tick;
  const svg = chartSvg(W, H, 'framed', title, description);
  const x = (v: number) => PAD.left + v * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - (v / yTop) * (H - PAD.top - PAD.bottom);
  svg.append(el('rect', { x: x(0), y: y(yTop), width: x(1) - x(0), height: y(0) - y(yTop), class: 'plot' }));
  for (let k = 0; k <= 4; k++) {
    const vx = k / 4;
    const vy = (yTop * k) / 4;
    if (k > 0 && k < 4)
      svg.append(
        el('line', { x1: x(vx), x2: x(vx), y1: y(0), y2: y(yTop), class: 'grid' }),
        el('line', { x1: x(0), x2: x(1), y1: y(vy), y2: y(vy), class: 'grid' }),
      );
    svg.append(
      el('line', { x1: x(vx), x2: x(vx), y1: y(0), y2: y(0) + 5, class: 'tick' }),
      el('line', { x1: x(0) - 5, x2: x(0), y1: y(vy), y2: y(vy), class: 'tick' }),
    );
    const tx = el('text', { x: x(vx), y: y(0) + 20, 'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle', class: 'axis' });
    tx.textContent = tick(vx);
    const ty = el('text', { x: x(0) - 8, y: y(vy) + 5, 'text-anchor': 'end', class: 'axis' });
    ty.textContent = yFormat(vy);
    svg.append(tx, ty);
  }
  const xl = el('text', { x: (x(0) + x(1)) / 2, y: H - 8, 'text-anchor': 'middle', class: 'label' });
  xl.textContent = xLabel;
  const yl = el('text', { x: 16, y: (y(0) + y(yTop)) / 2, 'text-anchor': 'middle', class: 'label', transform: `rotate(-90 16 ${(y(0) + y(yTop)) / 2})` });
  yl.textContent = yLabel;
  svg.append(xl, yl);
  drawLegend(svg, legend, 8);
  return { svg, x, y };
}

function drawMarkers(svg: SVGSVGElement, markers: Marker[], x: (v: number) => number, y: (v: number) => number, yTop: number): void {
  for (const m of markers) {
    const cx = x(Math.max(0, Math.min(1, m.x)));
    const node =
      m.y === undefined
        ? el('line', { x1: cx, x2: cx, y1: y(0), y2: y(yTop), class: `threshold ${m.kind}` })
        : m.kind === 'block'
          ? el('rect', { x: cx - 6, y: y(Math.max(0, Math.min(1, m.y))) - 6, width: 12, height: 12, class: `threshold ${m.kind}` })
          : el('circle', { cx, cy: y(Math.max(0, Math.min(1, m.y))), r: 6.5, class: `threshold ${m.kind}` });
    for (const [k, v] of Object.entries(m.data)) node.setAttribute(`data-${k}`, v);
    svg.append(tip(node, m.title));
  }
}

/** Points in [0,1]², each with its tooltip; `diagonal` draws y = x for reference. */
export function lineChart(
  title: string,
  description: string,
  xLabel: string,
  yLabel: string,
  points: { x: number; y: number; tip: string }[],
  o: { legend: LegendItem[]; diagonal?: boolean; dots?: boolean; markers?: Marker[] },
): SVGSVGElement {
  const { svg, x, y } = frame(title, description, xLabel, yLabel, o.legend);
  if (o.diagonal) svg.append(el('line', { x1: x(0), y1: y(0), x2: x(1), y2: y(1), class: 'reference' }));
  const clamp = (v: number) => Math.max(0, Math.min(1, v));
  svg.append(el('polyline', { points: points.map((p) => `${x(clamp(p.x)).toFixed(1)},${y(clamp(p.y)).toFixed(1)}`).join(' '), class: 'curve' }));
  // Every point answers on hover: drawn as a dot, or as a transparent target on the curve.
  for (const p of points)
    svg.append(
      tip(el('circle', { cx: x(clamp(p.x)).toFixed(1), cy: y(clamp(p.y)).toFixed(1), r: o.dots ? 4 : 5, class: o.dots ? 'dot point' : 'hit point' }), p.tip),
    );
  drawMarkers(svg, o.markers ?? [], x, y, 1);
  return svg;
}

/** The smallest of these tops that holds `v`: round numbers for an axis. */
function roundTop(v: number): number {
  return [0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 1].find((t) => t >= v) ?? 1;
}

/** Two series of counts over the same score bins, each as its share of its own total (so rare
 *  fraud shows), drawn with the classes `bar-a` and `bar-b`. */
export function histogram(
  title: string,
  description: string,
  edges: number[],
  a: { name: string; counts: number[] },
  b: { name: string; counts: number[] },
  o: { legend?: LegendItem[]; markers?: Marker[] } = {},
): SVGSVGElement {
  const share = (c: number[]) => {
    const total = c.reduce((s, v) => s + v, 0) || 1;
    return c.map((v) => v / total);
  };
  const sa = share(a.counts);
  const sb = share(b.counts);
  const top = roundTop(Math.max(...sa, ...sb, 1e-9));
  const legend: LegendItem[] = [{ name: a.name, cls: 'bar-a', shape: 'box' }, { name: b.name, cls: 'bar-b', shape: 'box' }, ...(o.legend ?? [])];
  const { svg, x, y } = frame(title, description, 'score', 'share of the class', legend, { yTop: top, yFormat: (v) => `${Math.round(v * 100)} %` });
  const percent = (v: number) => `${(v * 100).toFixed(1)} %`;
  for (let i = 0; i < edges.length - 1; i++) {
    const x0 = x(edges[i]!);
    const w = (x(edges[i + 1]!) - x0) / 2;
    const bin = `score ${edges[i]} to ${edges[i + 1]}`;
    svg.append(
      tip(
        el('rect', { x: x0, y: y(sa[i]!), width: Math.max(0, w - 0.5), height: y(0) - y(sa[i]!), class: 'bar-a', 'data-share': sa[i]! }),
        `${a.name}, ${bin}: ${percent(sa[i]!)} of ${a.name} payments (${a.counts[i]!.toLocaleString('en')})`,
      ),
    );
    svg.append(
      tip(
        el('rect', { x: x0 + w, y: y(sb[i]!), width: Math.max(0, w - 0.5), height: y(0) - y(sb[i]!), class: 'bar-b', 'data-share': sb[i]! }),
        `${b.name}, ${bin}: ${percent(sb[i]!)} of ${b.name} payments (${b.counts[i]!.toLocaleString('en')})`,
      ),
    );
  }
  drawMarkers(svg, o.markers ?? [], x, y, top);
  return svg;
}

/** One value per category (e.g. per week), as bars or lines, on a y axis from 0 to `top` with
 *  `format`ted ticks. A missing value (null) leaves a gap. Every bar and point carries its value
 *  in a tooltip (`<title>`) and in `data-value`. */
export function seriesChart(
  title: string,
  description: string,
  categories: string[],
  series: { name: string; values: (number | null)[]; kind: 'bar' | 'line'; cls: string }[],
  o: { top: number; format: (v: number) => string; yLabel: string },
): SVGSVGElement {
  const w = 640;
  const h = 280;
  const pad = { left: 56, right: 12, top: 28, bottom: 44 };
  const svg = chartSvg(w, h, 'wide', title, description);
  const n = Math.max(1, categories.length);
  const band = (w - pad.left - pad.right) / n;
  const cx = (i: number) => pad.left + band * (i + 0.5);
  const top = o.top > 0 ? o.top : 1;
  const y = (v: number) => h - pad.bottom - (Math.min(v, top) / top) * (h - pad.top - pad.bottom);
  svg.append(el('rect', { x: pad.left, y: pad.top, width: w - pad.left - pad.right, height: h - pad.top - pad.bottom, class: 'plot' }));
  for (let k = 0; k <= 4; k++) {
    const v = (top * k) / 4;
    svg.append(el('line', { x1: pad.left - 4, x2: w - pad.right, y1: y(v), y2: y(v), class: 'grid' }));
    const ty = el('text', { x: pad.left - 7, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' });
    ty.textContent = o.format(v);
    svg.append(ty);
  }
  const every = Math.ceil(n / 8);
  categories.forEach((c, i) => {
    if (i % every !== 0 && i !== n - 1) return;
    const tx = el('text', { x: cx(i), y: h - pad.bottom + 16, 'text-anchor': 'middle', class: 'axis' });
    tx.textContent = c;
    svg.append(tx);
  });
  const yl = el('text', {
    x: 14,
    y: (pad.top + h - pad.bottom) / 2,
    'text-anchor': 'middle',
    class: 'label',
    transform: `rotate(-90 14 ${(pad.top + h - pad.bottom) / 2})`,
  });
  yl.textContent = o.yLabel;
  svg.append(yl);
  const bars = series.filter((s) => s.kind === 'bar');
  const valued = (node: SVGElement, s: string, i: number, v: number) => {
    node.setAttribute('data-value', String(v));
    node.setAttribute('data-series', s);
    return tip(node, `${categories[i]}: ${s} ${o.format(v)}`);
  };
  bars.forEach((s, b) => {
    const bw = (band * 0.7) / bars.length;
    s.values.forEach((v, i) => {
      if (v === null) return;
      const x0 = cx(i) - (band * 0.7) / 2 + b * bw;
      svg.append(valued(el('rect', { x: x0, y: y(v), width: Math.max(1, bw - 1), height: Math.max(0, y(0) - y(v)), class: s.cls }), s.name, i, v));
    });
  });
  for (const s of series.filter((s) => s.kind === 'line')) {
    let run: string[] = [];
    const flush = () => {
      if (run.length > 1) svg.append(el('polyline', { points: run.join(' '), class: `curve ${s.cls}` }));
      run = [];
    };
    s.values.forEach((v, i) => {
      if (v === null) {
        flush();
        return;
      }
      run.push(`${cx(i).toFixed(1)},${y(v).toFixed(1)}`);
      svg.append(valued(el('circle', { cx: cx(i), cy: y(v), r: 3.5, class: `dot ${s.cls}` }), s.name, i, v));
    });
    flush();
  }
  drawLegend(
    svg,
    series.map((s) => ({ name: s.name, cls: s.cls, shape: 'box' as const })),
    pad.left,
  );
  return svg;
}

/** An axis top at or above `v` whose quarters are round: four times 1, 2 or 5 times a power of
 *  ten (a count's quarters are whole numbers). */
export function niceTop(v: number): number {
  const quarter = Math.max(1, v / 4);
  const p = 10 ** Math.floor(Math.log10(quarter));
  return 4 * [1, 2, 5, 10].map((m) => m * p).find((s) => s >= quarter)!;
}

/** The same for a share, at most 1 (quarters of 0.5 %, 1 %, 2.5 %, 5 %, 10 %, 20 % or 25 %). */
export function niceRate(v: number): number {
  return 4 * ([0.005, 0.01, 0.025, 0.05, 0.1, 0.2].find((s) => 4 * s >= v) ?? 0.25);
}
