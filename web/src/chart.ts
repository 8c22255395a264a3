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
