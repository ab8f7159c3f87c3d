// Projections: the read models kept in SQL tables, per bounded context:
// their builds and lag, a blue/green rebuild and a reset-and-replay (the
// admin's routes, since a projection's tables hold every tenant's rows),
// and their named read queries (the read role, in the session's tenant).
import { get, post, seg, session, projections as catalog } from '../api.js';
import { h, mount, errorBox, toast, confirm, params, go } from '../ui.js';
import { queryCard } from './readquery.js';

/** MAX_LAG is projection.MaxLag: a lag of it means at least that many. */
const MAX_LAG = 10000;
/** POLL_MS is how often a detail page reads the status while a build fills. */
const POLL_MS = 1000;

export async function render(parts, ctx) {
  const cat = await catalog();
  if (ctx.stale()) return;
  if (parts.length >= 2) return detail(cat, parts[0], parts[1], ctx);
  return list(cat, ctx);
}

const lagText = (n) => (n >= MAX_LAG ? `≥ ${n}` : String(n));

/** state sums a projection's status up: a word, a badge class and a sentence. */
export function state(s) {
  if (!s.live) return { word: 'no live build', cls: 'b-warn', text: 'its runner has not made its first build yet' };
  if (s.next) {
    return { word: 'rebuilding', cls: 'b-warn', text: `build ${s.next.number} fills beside the live build ${s.live.number}, ${lagText(s.next.lag)} streams behind; queries read build ${s.live.number} until the switch` };
  }
  if (s.live.lag > 0) return { word: 'behind', cls: 'b-warn', text: `${lagText(s.live.lag)} streams of the log follow its checkpoint` };
  return { word: 'caught up', cls: 'b-ok', text: 'its checkpoint is at the end of the log' };
}

function stateBadge(s) {
  const st = state(s);
  return h('span', { class: 'badge ' + st.cls, 'data-test': 'state', title: st.text }, st.word);
}

/**
 * refusal explains an error answer of the admin's routes: 403 is a
 * principal that is no admin, 401 no credential; anything else shows as
 * the error.
 */
export function refusal(err, what) {
  if (err && err.status === 403) {
    return h('div', { class: 'notice', role: 'note', 'data-test': 'not-admin' },
      h('strong', {}, 'Only an admin may see this. '),
      `${what} Your credential is no admin (the API answered 403 Forbidden); ask for one with the admin role, or use the pages your roles open.`);
  }
  if (err && err.status === 401) {
    return h('div', { class: 'notice', role: 'note', 'data-test': 'no-credential' },
      h('strong', {}, 'A credential is required. '), 'Type an API key or a JWT in the header and apply it.');
  }
  return errorBox(err);
}

const ADMIN_WHY = "A projection's tables hold every tenant's rows: its status counts every tenant's streams, and a rebuild or a reset changes what every tenant reads.";

/**
 * lastFailure reads the latest failure compensation recorded for the
 * projection in the session's tenant (null when none), or the error that
 * kept it from being read.
 */
async function lastFailure(context, name) {
  const q = new URLSearchParams({ context, processor: name, status: 'FAILED', size: '1' });
  try {
    const res = await get('compensation/executions?' + q);
    const it = (res.list || [])[0];
    return { total: res.total || 0, execution: it ? it.execution : null, id: it ? it.id.id : '' };
  } catch (err) { return { err }; }
}

function failureCell(context, name, f) {
  if (f.err) return h('span', { class: 'muted', title: f.err.message }, f.err.status === 403 ? 'needs the operator role' : 'unavailable');
  if (!f.total) return h('span', { class: 'muted', 'data-test': 'no-failure' }, 'none');
  const e = f.execution;
  return h('span', { 'data-test': 'last-failure' },
    h('a', { href: '#/failures/' + encodeURIComponent(f.id) }, e.error ? e.error.code : 'failed'), ' ',
    e.error ? h('span', { class: 'muted' }, e.error.message) : null, ' ',
    h('a', { href: `#/failures?${new URLSearchParams({ processor: name, status: 'FAILED' })}` }, `(${f.total} failed)`));
}

async function list(cat, ctx) {
  const answers = await Promise.all(cat.contexts.map((c) => get(`${seg(c)}/projections`, { tenanted: false })
    .then((list) => ({ context: c, list }), (err) => ({ context: c, list: null, err }))));
  const failures = new Map();
  await Promise.all(answers.flatMap((a) => (a.list || []).map(async (s) => {
    failures.set(`${s.context}/${s.name}`, await lastFailure(s.context, s.name));
  })));
  if (ctx.stale()) return;
  const tenant = session.tenant || 'your home tenant';
  const refused = answers.find((a) => a.err && (a.err.status === 403 || a.err.status === 401));
  const sections = refused ? [h('section', { class: 'card wide' }, refusal(refused.err, ADMIN_WHY + ' So their status, rebuild and reset are the admin\'s.'))]
    : answers.map((a) => h('section', { class: 'card wide', 'data-test': 'projections-' + a.context },
      h('h2', {}, 'Projections in ', h('code', {}, a.context)),
      a.err ? errorBox(a.err) : a.list.length === 0 ? h('p', { class: 'empty' }, 'none') : h('table', { class: 'list' },
        h('thead', {}, h('tr', {}, ['Name', 'Schema version', 'Live build', 'State', 'Lag', 'Checkpoint', `Last failure (in ${tenant})`].map((x) => h('th', {}, x)))),
        h('tbody', {}, a.list.map((s) => h('tr', {
          'data-test': 'projection', 'data-name': s.name, 'data-live-build': s.live ? s.live.number : '', 'data-state': state(s).word,
        },
        h('td', {}, h('a', { href: `#/projections/${seg(s.context)}/${seg(s.name)}` }, s.name)),
        h('td', { class: 'num' }, String(s.version)),
        h('td', { class: 'num', 'data-test': 'live-build' }, s.live ? (s.live.number ? `#${s.live.number}` : 'single') : '—'),
        h('td', {}, stateBadge(s), s.next ? h('span', { class: 'muted' }, ` → #${s.next.number}`) : null),
        h('td', { class: 'num', 'data-test': 'lag' }, s.live ? lagText(s.next ? s.next.lag : s.live.lag) : '—'),
        h('td', { class: 'num' }, s.live ? String(s.live.checkpoint.seq) : '—'),
        h('td', {}, failureCell(s.context, s.name, failures.get(`${s.context}/${s.name}`)))))))));

  mount(h('h1', {}, 'Projections ', h('button', { type: 'button', 'data-test': 'refresh', onclick: () => go('projections', Object.fromEntries(params().entries())) }, 'Refresh')),
    h('p', { class: 'muted' }, 'Read models kept in SQL tables, updated with their checkpoint in one transaction. Open one for its builds, a blue/green rebuild and a reset-and-replay.'),
    cat.contexts.length === 0 ? h('p', { class: 'empty', 'data-test': 'no-projections' }, 'This service runs no projections.') : null,
    h('div', { class: 'grid' }, sections, cat.queries.length ? queryCard(cat.queries, params().get('query')) : null));
}

function buildRow(role, b) {
  return h('tr', { 'data-test': 'build-' + role, 'data-number': b.number },
    h('td', {}, role === 'live' ? h('span', { class: 'badge b-ok' }, 'live') : h('span', { class: 'badge b-warn' }, 'filling')),
    h('td', { class: 'num' }, b.number ? `#${b.number}` : 'single'),
    h('td', { class: 'num' }, String(b.version)),
    h('td', { class: 'num' }, String(b.checkpoint.seq)),
    h('td', { class: 'num', 'data-test': 'lag' }, lagText(b.lag)),
    h('td', {}, (b.tables || []).map((t) => h('div', {}, h('code', {}, t)))));
}

async function detail(cat, context, name, ctx) {
  const path = `${seg(context)}/projections/${seg(name)}`;
  let s = null; let err = null;
  try { s = await get(path, { tenanted: false }); } catch (e) { err = e; }
  const failure = s ? await lastFailure(context, name) : null;
  if (ctx.stale()) return;
  const queries = cat.queries.filter((q) => q.context === context && q.projection === name);
  const back = h('p', {}, h('a', { href: '#/projections' }, '← Projections'));
  const title = h('h1', {}, 'Projection ', h('code', {}, `${context}/${name}`));
  const queryBox = queries.length ? queryCard(queries, params().get('query')) : null;
  if (!s) {
    mount(back, title, h('div', { class: 'grid' }, h('section', { class: 'card wide' }, err.status === 404 ? errorBox(err) : refusal(err, ADMIN_WHY)), queryBox));
    return;
  }

  const head = h('span', { 'data-test': 'status' });
  const summary = h('p', { class: 'muted', 'data-test': 'state-text' });
  const builds = h('tbody', {});
  const card = h('div', { id: 'projection', 'data-live-build': '' });
  let shown = null;
  const show = (st) => {
    if (shown && shown.live && st.live && shown.live.number !== st.live.number) toast(`Switched to build #${st.live.number}`, 'ok');
    shown = st;
    head.replaceChildren(stateBadge(st));
    summary.textContent = `Schema version ${st.version}: ${state(st).text}.`;
    builds.replaceChildren(...[st.live ? buildRow('live', st.live) : null, st.next ? buildRow('next', st.next) : null].filter(Boolean));
    card.dataset.liveBuild = st.live ? String(st.live.number) : '';
    card.dataset.nextBuild = st.next ? String(st.next.number) : '';
    card.dataset.state = state(st).word;
  };
  show(s);

  // While a build fills (or the live one is behind), read the status
  // again every second, as long as this page is the one shown.
  let polling = false;
  const poll = () => {
    if (polling) return;
    polling = true;
    const tick = () => setTimeout(async () => {
      if (ctx.stale() || !card.isConnected) { polling = false; return; }
      try { show(await get(path, { tenanted: false })); } catch (e) { polling = false; toast(e.message, 'bad'); return; }
      if (shown.next || (shown.live && shown.live.lag > 0)) tick(); else polling = false;
    }, POLL_MS);
    tick();
  };
  if (s.next || (s.live && s.live.lag > 0)) poll();

  const act = async (title, text, route, done) => {
    if (!await confirm(title, text)) return;
    try { const st = await post(`${path}/${route}`, {}, { tenanted: false }); toast(done, 'ok'); show(st); poll(); } catch (e) { toast(e.message, 'bad'); }
  };
  const rebuild = () => act('Rebuild the projection',
    `Create build tables beside the live ones and replay the whole log into them while build ${shown.live ? '#' + shown.live.number : ''} keeps serving queries; once caught up, queries switch to the new build at once and the old one is dropped. Every tenant's rows are rebuilt.`,
    'rebuild', 'Rebuild started');
  const reset = () => act('Reset and replay the projection',
    'Empty the live read model and replay the whole log into it. Meanwhile queries read it filling up, for every tenant: this is for development; in production, rebuild.',
    'reset', 'Reset: replaying the log');

  card.append(
    h('div', { class: 'actions' },
      h('button', { type: 'button', 'data-test': 'rebuild', class: 'primary', onclick: rebuild, disabled: s.version === 0,
        title: s.version === 0 ? 'a projection without a Schema has no builds: reset and replay it' : 'blue/green: no downtime, no half-built read model visible' }, 'Rebuild'),
      h('button', { type: 'button', 'data-test': 'reset', class: 'danger', onclick: reset }, 'Reset and replay')),
    h('div', { class: 'grid' },
      h('section', { class: 'card wide' }, h('h2', {}, 'Builds'), summary,
        h('table', { class: 'list', id: 'builds' },
          h('thead', {}, h('tr', {}, ['', 'Build', 'Schema version', 'Checkpoint', 'Lag', 'Tables'].map((x) => h('th', {}, x)))), builds)),
      h('section', { class: 'card' }, h('h2', {}, `Failures in ${session.tenant || 'your home tenant'}`),
        failureCell(context, name, failure),
        h('p', { class: 'muted' }, 'A stream the projection keeps failing on is recorded for compensation and passed without its writes; a retry from Failures applies it once.')),
      queryBox));

  const again = () => go(`projections/${seg(context)}/${seg(name)}`, Object.fromEntries(params().entries()));
  mount(back, h('h1', {}, 'Projection ', h('code', {}, `${context}/${name}`), ' ', head,
    h('button', { type: 'button', 'data-test': 'refresh', onclick: again }, 'Refresh')), card);
}
