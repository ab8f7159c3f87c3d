// A projection's named read queries, run from a form built from the
// OpenAPI document's description of each (its parameters, their types and
// whether they are required). A query needs only the read role and
// answers the session's tenant's rows: the API scopes it, whoever asks.
import { get, seg, session } from '../api.js';
import { h, json, errorBox, field, select } from '../ui.js';

const key = (q) => `${q.context}/${q.projection}/${q.query}`;

/** input is the form control of one query parameter. */
function input(p) {
  const attrs = { name: p.name, 'data-param': p.name, placeholder: p.required ? 'required' : 'optional' };
  if (p.type === 'boolean') return select(attrs, [['', p.required ? 'choose' : 'any'], 'true', 'false'], '');
  if (p.type === 'integer') {
    return h('input', { ...attrs, type: 'number', step: 1, min: p.name === 'limit' ? 1 : undefined, max: p.maximum, placeholder: p.default !== undefined ? String(p.default) : attrs.placeholder, size: 8 });
  }
  if (p.format === 'date-time') return h('input', { ...attrs, placeholder: '2006-01-02T15:04:05Z', size: 22 });
  return h('input', { ...attrs, size: 16 });
}

function cell(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/**
 * queryCard is the read-query form over queries, with the one whose
 * context/projection/query is selected first chosen.
 */
export function queryCard(queries, selected) {
  const choice = select({ id: 'read-query', name: 'query' }, queries.map((q) => [key(q), `${q.context} · ${q.projection} · ${q.query}`]), selected);
  const about = h('p', { class: 'muted', 'data-test': 'query-summary' });
  const inputs = h('div', { class: 'filters', id: 'read-params' });
  const request = h('code', { 'data-test': 'query-request' });
  const results = h('div', { id: 'read-results' });
  let controls = [];

  const current = () => queries.find((q) => key(q) === choice.value) || queries[0];
  const target = () => {
    const q = current();
    const qs = new URLSearchParams();
    for (const c of controls) if (c.value.trim() !== '') qs.set(c.name, c.value.trim());
    const s = qs.toString();
    return `${seg(q.context)}/projection/${seg(q.projection)}/${seg(q.query)}${s ? '?' + s : ''}`;
  };
  const refresh = () => { request.textContent = `GET ${session.tenant ? `/tenant/${session.tenant}` : ''}/${target()}`; };
  const pick = () => {
    const q = current();
    about.textContent = q.summary;
    controls = q.params.map(input);
    inputs.replaceChildren(...q.params.map((p, i) => field(p.name + (p.required ? ' *' : ''), controls[i])));
    for (const c of controls) c.addEventListener('input', refresh);
    results.replaceChildren();
    refresh();
  };
  choice.addEventListener('change', pick);

  const run = async () => {
    refresh();
    results.replaceChildren(h('p', { class: 'loading' }, 'Running…'));
    try {
      const res = await get(target());
      const cols = res.columns || [];
      const rows = res.rows || [];
      results.replaceChildren(
        h('p', { 'data-test': 'query-count', 'data-rows': rows.length, 'data-build': res.build },
          `${rows.length} row${rows.length === 1 ? '' : 's'}${res.truncated ? ' (truncated at the limit: there are more)' : ''}`,
          h('span', { class: 'muted' }, ` · from build #${res.build} (schema version ${res.version}) · tenant ${session.tenant || 'your home tenant'}`)),
        rows.length ? h('table', { class: 'list', id: 'read-rows' },
          h('thead', {}, h('tr', {}, cols.map((c) => h('th', {}, c)))),
          h('tbody', {}, rows.map((r) => h('tr', { 'data-test': 'read-row' }, cols.map((c) => h('td', {}, cell(r[c]))))))) : h('p', { class: 'empty' }, 'No rows.'),
        h('details', {}, h('summary', {}, 'raw answer'), json(res)));
    } catch (err) { results.replaceChildren(errorBox(err)); }
  };

  const form = h('form', { id: 'read-form', class: 'stack' },
    h('div', { class: 'filters' }, field('Query', choice)), about, inputs,
    h('p', {}, h('button', { type: 'submit', class: 'primary', id: 'run-read-query' }, 'Run'), ' ', request));
  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  pick();
  return h('section', { class: 'card wide', id: 'read-queries' }, h('h2', {}, 'Read queries'),
    h('p', { class: 'muted' }, 'Named, parameterised queries over the live build, with the read role. Each answers only your tenant\'s rows, whatever the parameters.'),
    form, results);
}
