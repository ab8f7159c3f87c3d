// Overview: what exists now, per aggregate type and in compensation.
import { get, post, seg, types } from '../api.js';
import { h, mount, errorBox, go } from '../ui.js';
import { panel } from './metrics.js';

function bars(rows) {
  const max = Math.max(1, ...rows.map((r) => r.value || 0));
  return h('table', { class: 'bars' }, h('tbody', {}, rows.map((r) => {
    const bar = h('div', { class: 'bar ' + (r.cls || '') });
    bar.style.width = Math.round(((r.value || 0) / max) * 100) + '%';
    return h('tr', { 'data-test': r.test },
      h('th', {}, r.href ? h('a', { href: r.href }, r.label) : r.label),
      h('td', { class: 'num' }, r.value === null ? '—' : String(r.value)),
      h('td', { class: 'barcell' }, bar));
  })));
}

export async function render(_parts, ctx) {
  const ts = await types();
  const counts = await Promise.all(ts.map((t) => post(`${seg(t.segment)}/snapshot/count`, {})
    .then((n) => ({ t, n }), (err) => ({ t, n: null, err }))));
  let comp = null; let compErr = null;
  try { comp = await get('compensation/counts'); } catch (err) { compErr = err; }
  const metricsPanel = await panel(ctx.settings.metrics, ctx);
  if (ctx.stale()) return;

  const byContext = new Map();
  for (const c of counts) {
    const k = c.t.context || '(no context)';
    if (!byContext.has(k)) byContext.set(k, []);
    byContext.get(k).push(c);
  }
  const aggPanels = [...byContext.entries()].map(([context, cs]) => h('section', { class: 'card' },
    h('h2', {}, 'Aggregates in ', h('code', {}, context)),
    bars(cs.map((c) => ({
      label: c.t.aggregate, value: c.n, test: 'count-' + c.t.segment,
      href: '#/query?type=' + encodeURIComponent(c.t.segment),
    }))),
    cs.some((c) => c.err) ? h('p', { class: 'muted' }, 'Some counts are unavailable: ', cs.filter((c) => c.err).map((c) => `${c.t.aggregate}: ${c.err.message}`).join('; ')) : null));

  let compPanel;
  if (comp) {
    const rows = [
      { label: 'failed', value: comp.failed, cls: 'failed', href: '#/failures?status=FAILED', test: 'backlog-failed' },
      { label: 'prepared (retrying)', value: comp.prepared, cls: 'prepared', href: '#/failures?status=PREPARED', test: 'backlog-prepared' },
      { label: 'waiting for an operator', value: comp.blocked, cls: 'blocked', href: '#/failures?needsOperator=true', test: 'backlog-blocked' },
      { label: 'succeeded', value: comp.succeeded, cls: 'succeeded', href: '#/failures?status=SUCCEEDED', test: 'backlog-succeeded' },
    ];
    compPanel = h('section', { class: 'card' }, h('h2', {}, 'Compensation backlog'), bars(rows),
      h('p', {}, h('button', { type: 'button', onclick: () => go('failures', { status: 'FAILED' }) }, 'Open failures')));
  } else {
    compPanel = h('section', { class: 'card' }, h('h2', {}, 'Compensation backlog'),
      compErr && compErr.status === 403 ? h('p', { class: 'muted' }, 'Your credential lacks the operator role.') : errorBox(compErr));
  }

  mount(h('h1', {}, 'Overview ', h('button', { type: 'button', 'data-test': 'refresh', onclick: () => go('overview') }, 'Refresh')), h('div', { class: 'grid' }, aggPanels, compPanel, metricsPanel.tagName === 'SECTION' ? metricsPanel : null),
    metricsPanel.tagName === 'SECTION' ? null : metricsPanel);
}
