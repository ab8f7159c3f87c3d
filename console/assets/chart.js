// Small inline SVG charts: a sparkline of a short series and a bar. They
// are built as DOM nodes (no markup strings), so the CSP holds.

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  return el;
}

/**
 * sparkline draws values (numbers; NaN for a gap) left to right, scaled
 * to the largest, with the last value marked; title is its tooltip.
 */
export function sparkline(values, { width = 120, height = 24, title = '', cls = '' } = {}) {
  const s = svg('svg', { class: 'spark ' + cls, width, height, viewBox: `0 0 ${width} ${height}`, role: 'img' });
  if (title) { const t = svg('title'); t.textContent = title; s.append(t); s.setAttribute('aria-label', title); }
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return s;
  const max = Math.max(...finite, 0) || 1;
  const step = values.length > 1 ? (width - 4) / (values.length - 1) : 0;
  const y = (v) => (height - 2) - ((height - 4) * v) / max;
  let d = '';
  let pen = false;
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) { pen = false; return; }
    d += `${pen ? 'L' : 'M'}${(2 + i * step).toFixed(1)},${y(v).toFixed(1)}`;
    pen = true;
  });
  s.append(svg('line', { class: 'base', x1: 2, y1: height - 2, x2: width - 2, y2: height - 2 }));
  if (d) s.append(svg('path', { d, class: 'line' }));
  const lastIndex = values.length - 1;
  const last = values[lastIndex];
  if (Number.isFinite(last)) s.append(svg('circle', { cx: (2 + lastIndex * step).toFixed(1), cy: y(last).toFixed(1), r: 2, class: 'dot' }));
  return s;
}

/** bar draws value as a horizontal bar of max's width. */
export function bar(value, max, { width = 90, height = 10, cls = '' } = {}) {
  const s = svg('svg', { class: 'hbar ' + cls, width, height, viewBox: `0 0 ${width} ${height}` });
  s.append(svg('rect', { class: 'track', x: 0, y: 0, width, height, rx: 2 }));
  const w = max > 0 && Number.isFinite(value) ? Math.max(value > 0 ? 2 : 0, Math.round((Math.min(value, max) / max) * width)) : 0;
  s.append(svg('rect', { class: 'fill', x: 0, y: 0, width: w, height, rx: 2 }));
  return s;
}
