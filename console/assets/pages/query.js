// Snapshot query: build a condition with a form, see its JSON, run it and
// page through the results.
import { post, seg, types } from '../api.js';
import { h, mount, json, time, errorBox, field, select, pager, params } from '../ui.js';

const OPERATORS = ['EQ', 'NE', 'GT', 'GTE', 'LT', 'LTE', 'CONTAINS', 'STARTS_WITH', 'ENDS_WITH', 'IN', 'NOT_IN',
  'BETWEEN', 'NULL', 'NOT_NULL', 'TRUE', 'FALSE', 'EXISTS', 'AGGREGATE_ID', 'AGGREGATE_IDS', 'OWNER_ID', 'DELETED',
  'TODAY', 'THIS_WEEK', 'THIS_MONTH', 'RECENT_DAYS'];
const NO_VALUE = new Set(['NULL', 'NOT_NULL', 'TRUE', 'FALSE', 'TODAY', 'THIS_WEEK', 'THIS_MONTH']);
const NO_FIELD = new Set(['AGGREGATE_ID', 'AGGREGATE_IDS', 'OWNER_ID', 'DELETED']);
const LISTS = new Set(['IN', 'NOT_IN', 'AGGREGATE_IDS', 'BETWEEN']);

/** scalar reads a value as JSON when it is JSON (numbers, booleans), else as a string. */
function scalar(s) {
  const t = s.trim();
  if (/^(-?\d+(\.\d+)?|true|false|null)$/.test(t) || /^["[{]/.test(t)) {
    try { return JSON.parse(t); } catch { /* a string */ }
  }
  return t;
}

function conditionOf(row) {
  const op = row.op.value;
  const c = { operator: op };
  if (!NO_FIELD.has(op)) c.field = row.field.value.trim();
  if (!NO_VALUE.has(op)) {
    const v = row.value.value;
    if (LISTS.has(op)) c.value = v.split(',').map(scalar);
    else if (v.trim() !== '' || op !== 'EXISTS') c.value = scalar(v);
  }
  return c;
}

export async function render(_parts, ctx) {
  const ts = await types();
  if (ctx.stale()) return;
  const q = params();
  let page = 1;
  const type = select({ id: 'query-type' }, ts.map((t) => [t.segment, t.name]), q.get('type'));
  const combine = select({ id: 'query-combine' }, ['AND', 'OR'], 'AND');
  const size = h('input', { id: 'query-size', type: 'number', min: 1, max: 1000, value: 10, size: 4 });
  const sortField = h('input', { id: 'query-sort', placeholder: 'version', size: 14 });
  const sortDir = select({ id: 'query-dir' }, ['ASC', 'DESC'], 'ASC');
  const rowsBox = h('div', { class: 'conditions' });
  const jsonBox = h('pre', { class: 'json', id: 'query-json' });
  const results = h('div', { id: 'query-results' });
  const rows = [];

  const build = () => {
    const cs = rows.map(conditionOf);
    const condition = cs.length === 0 ? { operator: 'ALL' } : cs.length === 1 ? cs[0] : { operator: combine.value, children: cs };
    const body = { condition, pagination: { index: page, size: Number(size.value) || 10 } };
    if (sortField.value.trim()) body.sort = [{ field: sortField.value.trim(), direction: sortDir.value }];
    return body;
  };
  const refresh = () => { jsonBox.textContent = JSON.stringify(build(), null, 2); };

  const addRow = (f = '', op = 'EQ', v = '') => {
    const row = {
      field: h('input', { class: 'cond-field', placeholder: 'state.username', value: f, size: 18 }),
      op: select({ class: 'cond-op' }, OPERATORS, op),
      value: h('input', { class: 'cond-value', placeholder: 'value (JSON or text; lists comma-separated)', value: v, size: 24 }),
    };
    const el = h('div', { class: 'cond' }, row.field, row.op, row.value,
      h('button', { type: 'button', title: 'remove', onclick: () => { rows.splice(rows.indexOf(row), 1); el.remove(); refresh(); } }, '✕'));
    for (const x of [row.field, row.op, row.value]) x.addEventListener('input', refresh);
    rows.push(row);
    rowsBox.append(el);
    refresh();
  };

  const run = async () => {
    refresh();
    const t = ts.find((x) => x.segment === type.value);
    results.replaceChildren(h('p', { class: 'loading' }, 'Running…'));
    try {
      const res = await post(`${seg(t.segment)}/snapshot/paged`, build());
      const list = res.list || [];
      const cols = new Set();
      for (const d of list) for (const k of Object.keys(d.state || {})) cols.add(k);
      results.replaceChildren(
        h('p', { 'data-test': 'query-total' }, `${res.total} match`),
        list.length ? h('table', { class: 'list' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Aggregate ID'), h('th', {}, 'Version'), h('th', {}, 'Updated'), [...cols].map((c) => h('th', {}, c)))),
          h('tbody', {}, list.map((d) => h('tr', { 'data-test': 'query-row' },
            h('td', {}, h('a', { href: `#/aggregates/${seg(t.segment)}/${seg(d.aggregateId.id)}` }, d.aggregateId.id)),
            h('td', { class: 'num' }, String(d.version)), h('td', {}, time(d.eventTime)),
            [...cols].map((c) => h('td', {}, typeof d.state[c] === 'object' ? JSON.stringify(d.state[c]) : String(d.state[c] ?? ''))))))) : null,
        pager(page, Number(size.value) || 10, res.total, (p) => { page = p; run(); }),
        h('details', {}, h('summary', {}, 'raw answer'), json(res)));
    } catch (err) { results.replaceChildren(errorBox(err)); }
  };

  const form = h('form', { id: 'query-form', class: 'stack' },
    h('div', { class: 'filters' }, field('Aggregate type', type), field('Combine', combine),
      field('Sort by', sortField), field('Direction', sortDir), field('Page size', size)),
    h('h2', {}, 'Conditions'), rowsBox,
    h('p', {}, h('button', { type: 'button', id: 'add-condition', onclick: () => addRow() }, '+ Condition'), ' ',
      h('button', { type: 'submit', class: 'primary', id: 'run-query' }, 'Run')));
  form.addEventListener('submit', (e) => { e.preventDefault(); page = 1; run(); });
  for (const x of [combine, size, sortField, sortDir]) x.addEventListener('input', refresh);
  addRow();

  mount(h('h1', {}, 'Snapshot query'),
    h('p', { class: 'muted' }, 'Conditions name the fields of the query document: aggregateId, version, eventTime (epoch milliseconds), state.… . Queries see only your tenant.'),
    h('div', { class: 'grid' }, h('section', { class: 'card' }, form),
      h('section', { class: 'card' }, h('h2', {}, 'The query as JSON'), jsonBox)),
    h('section', { class: 'card wide' }, h('h2', {}, 'Results'), results));
}
