// Charts as inline SVG built from the service's numbers (no chart library): a line chart for the
// ROC, precision–recall and reliability curves (with a reference diagonal where one means
// something), and a grouped bar chart for the score histograms. Every chart has a title and a text
// description for screen readers.

const NS = 'http://www.w3.org/2000/svg';
const W = 360;
const H = 260;
const PAD = { left: 44, right: 12, top: 12, bottom: 40 };

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

function frame(title: string, description: string, xLabel: string, yLabel: string): { svg: SVGSVGElement; x: (v: number) => number; y: (v: number) => number } {
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', class: 'chart' });
  const t = el('title', {});
  t.textContent = title;
  const d = el('desc', {});
  d.textContent = description;
  svg.append(t, d);
  const x = (v: number) => PAD.left + v * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - v * (H - PAD.top - PAD.bottom);
  svg.append(el('rect', { x: x(0), y: y(1), width: x(1) - x(0), height: y(0) - y(1), class: 'plot' }));
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    svg.append(el('line', { x1: x(v), x2: x(v), y1: y(0), y2: y(0) + 4, class: 'tick' }), el('line', { x1: x(0) - 4, x2: x(0), y1: y(v), y2: y(v), class: 'tick' }));
    const tx = el('text', { x: x(v), y: y(0) + 16, 'text-anchor': 'middle', class: 'axis' });
    tx.textContent = String(v);
    const ty = el('text', { x: x(0) - 7, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' });
    ty.textContent = String(v);
    svg.append(tx, ty);
  }
  const xl = el('text', { x: (x(0) + x(1)) / 2, y: H - 6, 'text-anchor': 'middle', class: 'label' });
  xl.textContent = xLabel;
  const yl = el('text', { x: 12, y: (y(0) + y(1)) / 2, 'text-anchor': 'middle', class: 'label', transform: `rotate(-90 12 ${(y(0) + y(1)) / 2})` });
  yl.textContent = yLabel;
  svg.append(xl, yl);
  return { svg, x, y };
}

/** Points in [0,1]²; `diagonal` draws y = x for reference. */
export function lineChart(title: string, description: string, xLabel: string, yLabel: string, points: [number, number][], o: { diagonal?: boolean; dots?: boolean } = {}): SVGSVGElement {
  const { svg, x, y } = frame(title, description, xLabel, yLabel);
  if (o.diagonal) svg.append(el('line', { x1: x(0), y1: y(0), x2: x(1), y2: y(1), class: 'reference' }));
  const clamp = (v: number) => Math.max(0, Math.min(1, v));
  svg.append(el('polyline', { points: points.map(([a, b]) => `${x(clamp(a)).toFixed(1)},${y(clamp(b)).toFixed(1)}`).join(' '), class: 'curve' }));
  if (o.dots) for (const [a, b] of points) svg.append(el('circle', { cx: x(clamp(a)), cy: y(clamp(b)), r: 3, class: 'dot' }));
  return svg;
}

/** Two series of counts over the same bins, each scaled to its own share (so rare fraud shows). */
export function histogram(title: string, description: string, edges: number[], a: { name: string; counts: number[] }, b: { name: string; counts: number[] }): SVGSVGElement {
  const { svg, x, y } = frame(title, description, 'score', 'share of the class');
  const share = (c: number[]) => {
    const total = c.reduce((s, v) => s + v, 0) || 1;
    return c.map((v) => v / total);
  };
  const sa = share(a.counts);
  const sb = share(b.counts);
  const top = Math.max(...sa, ...sb, 1e-9);
  for (let i = 0; i < edges.length - 1; i++) {
    const x0 = x(edges[i]!);
    const w = (x(edges[i + 1]!) - x0) / 2;
    svg.append(el('rect', { x: x0, y: y(sa[i]! / top), width: Math.max(0, w - 0.5), height: y(0) - y(sa[i]! / top), class: 'bar-a' }));
    svg.append(el('rect', { x: x0 + w, y: y(sb[i]! / top), width: Math.max(0, w - 0.5), height: y(0) - y(sb[i]! / top), class: 'bar-b' }));
  }
  const legend = el('text', { x: x(0.55), y: y(0.95), class: 'legend' });
  legend.textContent = `■ ${a.name}  □ ${b.name}`;
  svg.append(legend);
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
  const svg = el('svg', { viewBox: `0 0 ${w} ${h}`, role: 'img', class: 'chart wide' });
  const t = el('title', {});
  t.textContent = title;
  const d = el('desc', {});
  d.textContent = description;
  svg.append(t, d);
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
  const yl = el('text', { x: 14, y: (pad.top + h - pad.bottom) / 2, 'text-anchor': 'middle', class: 'label', transform: `rotate(-90 14 ${(pad.top + h - pad.bottom) / 2})` });
  yl.textContent = o.yLabel;
  svg.append(yl);
  const bars = series.filter((s) => s.kind === 'bar');
  const tip = (node: SVGElement, s: string, i: number, v: number) => {
    const tt = el('title', {});
    tt.textContent = `${categories[i]}: ${s} ${o.format(v)}`;
    node.setAttribute('data-value', String(v));
    node.setAttribute('data-series', s);
    node.append(tt);
    return node;
  };
  bars.forEach((s, b) => {
    const bw = (band * 0.7) / bars.length;
    s.values.forEach((v, i) => {
      if (v === null) return;
      const x0 = cx(i) - (band * 0.7) / 2 + b * bw;
      svg.append(tip(el('rect', { x: x0, y: y(v), width: Math.max(1, bw - 1), height: Math.max(0, y(0) - y(v)), class: s.cls }), s.name, i, v));
    });
  });
  for (const s of series.filter((s) => s.kind === 'line')) {
    let run: string[] = [];
    const flush = () => {
      if (run.length > 1) svg.append(el('polyline', { points: run.join(' '), class: `curve ${s.cls}` }));
      run = [];
    };
    s.values.forEach((v, i) => {
      if (v === null) return flush();
      run.push(`${cx(i).toFixed(1)},${y(v).toFixed(1)}`);
      svg.append(tip(el('circle', { cx: cx(i), cy: y(v), r: 3.5, class: `dot ${s.cls}` }), s.name, i, v));
    });
    flush();
  }
  // The legend, in the series' own colours.
  let lx = pad.left;
  for (const s of series) {
    svg.append(el('rect', { x: lx, y: 8, width: 12, height: 12, class: `swatch ${s.cls}` }));
    const lt = el('text', { x: lx + 16, y: 18, class: 'legend' });
    lt.textContent = s.name;
    svg.append(lt);
    lx += 24 + s.name.length * 6.5;
  }
  return svg;
}
