// Failures: compensation executions, their details and the operator's
// actions on them.
import { get, post, put, seg } from '../api.js';
import { h, mount, json, time, duration, errorBox, toast, confirm, field, select, pager, badge, params, go } from '../ui.js';

const SIZE = 20;

export async function render(parts, ctx) {
  if (parts[0]) return detail(parts[0], ctx);
  return list(ctx);
}

function filterForm(q) {
  const input = (name, ph) => h('input', { name, value: q.get(name) || '', placeholder: ph, size: 14 });
  const form = h('form', { class: 'filters', id: 'failure-filters' },
    field('Status', select({ name: 'status' }, [['', 'any'], 'FAILED', 'PREPARED', 'SUCCEEDED'], q.get('status'))),
    field('Recoverable', select({ name: 'recoverable' }, [['', 'any'], 'RECOVERABLE', 'UNRECOVERABLE', 'UNKNOWN'], q.get('recoverable'))),
    field('Function', input('function', 'on_user_registered')),
    field('Processor', input('processor', 'notifications')),
    field('Aggregate', input('aggregate', 'user or shop.user')),
    field('Aggregate ID', input('aggregateId', '')),
    field('Error code', input('code', 'IllegalArgument')),
    field('Failed since', h('input', { name: 'since', type: 'datetime-local', value: q.get('since') || '' })),
    field('Failed before', h('input', { name: 'before', type: 'datetime-local', value: q.get('before') || '' })),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'needsOperator', value: 'true', checked: q.get('needsOperator') === 'true' }), ' waiting for an operator'),
    h('button', { type: 'submit', class: 'primary' }, 'Filter'),
    h('button', { type: 'button', onclick: () => go('failures') }, 'Clear'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const o = Object.fromEntries(new FormData(form).entries());
    go('failures', o);
  });
  return form;
}

async function list(ctx) {
  const q = params();
  const page = Math.max(1, parseInt(q.get('page') || '1', 10) || 1);
  const api = new URLSearchParams();
  for (const k of ['status', 'recoverable', 'function', 'processor', 'aggregate', 'aggregateId', 'needsOperator']) {
    if (q.get(k)) api.set(k, q.get(k));
  }
  // Error code and failure time are filtered by the API too, over every
  // execution; datetime-local values are the operator's local time.
  const code = (q.get('code') || '').trim();
  if (code) api.set('errorCode', code);
  for (const [k, name] of [['since', 'failedFrom'], ['before', 'failedTo']]) {
    const at = q.get(k) ? new Date(q.get(k)) : null;
    if (at && !isNaN(at.getTime())) api.set(name, at.toISOString());
  }
  api.set('page', page); api.set('size', SIZE);
  const res = await get('compensation/executions?' + api);
  const total = res.total; const items = res.list || [];
  if (ctx.stale()) return;
  const rows = items.map((it) => {
    const e = it.execution; const id = it.id.id;
    return h('tr', { 'data-test': 'execution', 'data-id': id, 'data-status': e.status },
      h('td', {}, h('a', { href: '#/failures/' + encodeURIComponent(id) }, id.slice(0, 8) + '…')),
      h('td', {}, badge(e.status)),
      h('td', {}, `${e.function.processor}.${e.function.name}`),
      h('td', {}, `${e.aggregate.aggregate} `, h('code', {}, e.aggregate.id), ` v${e.version}`),
      h('td', {}, e.error ? h('span', { title: e.error.message }, e.error.code) : ''),
      h('td', {}, e.recoverable),
      h('td', { class: 'num' }, `${e.retries}/${e.retrySpec.maxRetries}`),
      h('td', {}, time(e.failedAt || e.createdAt)),
      h('td', {}, e.status === 'SUCCEEDED' ? '' : time(e.nextRetryAt)));
  });
  const q2 = Object.fromEntries(q.entries());
  mount(h('h1', {}, 'Failures ', h('button', { type: 'button', 'data-test': 'refresh', onclick: () => go('failures', q2) }, 'Refresh')),
    h('p', { class: 'muted' }, 'Event-function executions that failed after their in-place retries. Retries are scheduled by the retry spec; an operator may force one, change the spec, the target function or the recoverability.'),
    filterForm(q),
    items.length ? h('table', { class: 'list', id: 'executions' },
      h('thead', {}, h('tr', {}, ['Execution', 'Status', 'Function', 'Aggregate', 'Error', 'Recoverable', 'Retries', 'Failed', 'Next retry'].map((t) => h('th', {}, t)))),
      h('tbody', {}, rows)) : h('p', { class: 'empty', 'data-test': 'no-executions' }, 'No executions match.'),
    pager(page, SIZE, total, (p) => go('failures', { ...q2, page: p })));
}

function aggSegment(a) { return seg(a.context ? `${a.context}.${a.aggregate}` : a.aggregate); }

async function detail(id, ctx) {
  const d = await get('compensation/executions/' + seg(id));
  const e = d.execution;
  let stream = null; let streamErr = null;
  try {
    const s = await get(`${aggSegment(e.aggregate)}/${seg(e.aggregate.id)}/event/${e.version}/${e.version}`);
    stream = s && s[0];
  } catch (err) { streamErr = err; }
  if (ctx.stale()) return;
  const failed = stream ? (stream.events || []).find((ev) => ev.id === e.eventId) || stream.events[0] : null;

  const act = (label, test, fn, cls) => h('button', { type: 'button', 'data-test': test, class: cls, onclick: fn }, label);
  const done = (msg) => { toast(msg, 'ok'); go('failures/' + encodeURIComponent(id)); };
  const fail = (err) => toast(err.message, 'bad');

  const forceRetry = async () => {
    if (!await confirm('Force a retry', `Re-deliver event ${e.eventName} (${e.eventId}) to ${e.function.processor}.${e.function.name} now, whatever its retry limit and due time?`)) return;
    try {
      const a = await post(`compensation/executions/${seg(id)}/retry`, {});
      done(`Retry ${a.attempt}: ${a.outcome}${a.error ? ' — ' + a.error.message : ''}`);
    } catch (err) { fail(err); }
  };
  const markRecoverable = async () => {
    const s = select({ id: 'recoverable-choice' }, ['RECOVERABLE', 'UNRECOVERABLE', 'UNKNOWN'], e.recoverable);
    if (!await confirm('Change recoverability', 'Mark this execution as:', s)) return;
    try { await put(`compensation/executions/${seg(id)}/recoverable`, { recoverable: s.value }); done('Marked ' + s.value); } catch (err) { fail(err); }
  };
  const changeFunction = async () => {
    const c = h('input', { id: 'fn-context', value: e.function.context });
    const p = h('input', { id: 'fn-processor', value: e.function.processor });
    const n = h('input', { id: 'fn-name', value: e.function.name });
    const box = h('div', { class: 'stack' }, field('Context', c), field('Processor', p), field('Function', n));
    if (!await confirm('Change the target function', 'Retries of this execution are delivered to:', box)) return;
    try { await put(`compensation/executions/${seg(id)}/function`, { context: c.value, processor: p.value, name: n.value }); done('Function changed'); } catch (err) { fail(err); }
  };
  const changeSpec = async () => {
    const m = h('input', { id: 'spec-max', type: 'number', min: 0, value: e.retrySpec.maxRetries });
    const b = h('input', { id: 'spec-backoff', value: duration(e.retrySpec.minBackoffMs) });
    const t = h('input', { id: 'spec-timeout', value: duration(e.retrySpec.executionTimeoutMs) });
    const box = h('div', { class: 'stack' }, field('Max retries', m), field('Min backoff', b), field('Execution timeout', t));
    if (!await confirm('Change the retry spec', 'Durations as 30s, 3m, 1h.', box)) return;
    try {
      await put(`compensation/executions/${seg(id)}/retry-spec`, { maxRetries: Number(m.value), minBackoff: b.value, executionTimeout: t.value });
      done('Retry spec changed');
    } catch (err) { fail(err); }
  };

  const kv = (rows) => h('dl', { class: 'kv' }, rows.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  const history = (d.history || []).map((s) => h('li', { 'data-test': 'history' },
    h('div', {}, h('strong', {}, `v${s.version}`), ' ', time(s.createTime), ' ',
      s.ownerId ? h('span', { class: 'who' }, 'by ', h('code', {}, s.ownerId)) : h('span', { class: 'muted' }, 'by the service'),
      ' ', (s.events || []).map((ev) => badge(ev.name))),
    h('details', {}, h('summary', {}, 'events'), json((s.events || []).map((ev) => ({ name: ev.name, body: ev.body }))))));

  mount(h('p', {}, h('a', { href: '#/failures' }, '← Failures')),
    h('h1', {}, 'Execution ', h('code', {}, id.slice(0, 8) + '…'), ' ', h('span', { 'data-test': 'status' }, badge(e.status))),
    h('div', { class: 'actions' },
      act('Force retry', 'force-retry', forceRetry, 'primary'),
      act('Mark recoverable / unrecoverable', 'mark-recoverable', markRecoverable),
      act('Change function', 'change-function', changeFunction),
      act('Change retry spec', 'change-spec', changeSpec)),
    h('div', { class: 'grid' },
      h('section', { class: 'card' }, h('h2', {}, 'Error'),
        e.error ? [h('p', {}, h('strong', { 'data-test': 'error-code' }, e.error.code), ' ', e.error.message),
          e.error.details ? h('pre', { class: 'stack-trace', 'data-test': 'stack' }, e.error.details) : null] : h('p', {}, 'none'),
        kv([['Failures', String(e.failures)], ['Retries', `${e.retries} of ${e.retrySpec.maxRetries}`],
          ['Recoverable', h('span', { 'data-test': 'recoverable' }, e.recoverable)], ['Retryable', String(e.retryable)],
          ['Created', time(e.createdAt)], ['Failed', time(e.failedAt)], ['Retried', time(e.retryAt)],
          e.succeededAt ? ['Succeeded', time(e.succeededAt)] : null,
          e.status !== 'SUCCEEDED' ? ['Next retry', time(e.nextRetryAt)] : null])),
      h('section', { class: 'card' }, h('h2', {}, 'Function and retry spec'),
        kv([['Function', h('code', { 'data-test': 'function' }, `${e.function.context}.${e.function.processor}.${e.function.name}`)], ['Stage', e.stage],
          ['Max retries', h('span', { 'data-test': 'max-retries' }, String(e.retrySpec.maxRetries))],
          ['Min backoff', duration(e.retrySpec.minBackoffMs)], ['Execution timeout', duration(e.retrySpec.executionTimeoutMs)]])),
      h('section', { class: 'card wide' }, h('h2', {}, 'The event that failed'),
        kv([['Event', h('code', {}, `${e.eventName} ${e.eventId}`)],
          ['Aggregate', h('a', { href: `#/aggregates/${aggSegment(e.aggregate)}/${seg(e.aggregate.id)}?v=${e.version}` }, `${e.aggregate.context}.${e.aggregate.aggregate} ${e.aggregate.id} v${e.version}`)],
          stream ? ['Request', h('code', {}, stream.requestId)] : null,
          stream && stream.header && stream.header['factum.principal'] ? ['Principal', stream.header['factum.principal']] : null]),
        failed ? json(failed.body) : streamErr ? errorBox(streamErr) : null),
      h('section', { class: 'card wide' }, h('h2', {}, 'Lifecycle'), h('ol', { class: 'history' }, history))));
}
