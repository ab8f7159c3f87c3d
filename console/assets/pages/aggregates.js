// Aggregates: find one, read its event stream, step through its states,
// see and regenerate its snapshot, delete and recover it.
import { get, put, del, seg, types, session, ApiError } from '../api.js';
import { h, mount, json, time, errorBox, toast, confirm, field, select, params, go } from '../ui.js';
import { deriveID } from '../derive.js';

const MAX_RANGE = 1000; // httpapi.DefaultMaxEventRange

/** findForm looks an aggregate up by ID or by request ID. */
export function findForm(ts, q, onFound) {
  const type = select({ name: 'type', id: 'find-type' }, ts.map((t) => [t.segment, t.name]), q.get('type'));
  const id = h('input', { name: 'id', id: 'find-id', value: q.get('id') || '', placeholder: 'aggregate ID', size: 38 });
  const rid = h('input', { name: 'requestId', id: 'find-request', value: q.get('requestId') || '', placeholder: 'request ID', size: 24 });
  const out = h('div', { class: 'found' });
  const form = h('form', { class: 'filters', id: 'find-form' },
    field('Type', type), field('Aggregate ID', id), field('or request ID', rid),
    h('button', { type: 'submit', class: 'primary' }, 'Find'), out);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    out.replaceChildren();
    const t = ts.find((x) => x.segment === type.value);
    try {
      await onFound(t, id.value.trim(), rid.value.trim(), out);
    } catch (err) { out.replaceChildren(errorBox(err)); }
  });
  return form;
}

/**
 * lookup answers the request's outcome on aggregate id of type t; without
 * an id, on the ID a create sent without one got from the request ID, in
 * the tenant the session acts in: the one picked, else the credential's
 * home tenant, which GET /principal names.
 */
export async function lookup(t, id, rid) {
  const derived = !id;
  const tenant = id ? '' : session.tenant || (await get('principal')).tenant || 'default';
  const aid = id || deriveID(t.context, t.aggregate, tenant, rid);
  try {
    return { id: aid, derived, result: await get(`${seg(t.segment)}/${seg(aid)}/request/${seg(rid)}`) };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { id: aid, derived, result: null, err };
    throw err;
  }
}

export async function render(parts, ctx) {
  const ts = await types();
  if (ctx.stale()) return;
  if (parts.length >= 2) return show(ts, parts[0], parts[1], ctx);
  const q = params();
  mount(h('h1', {}, 'Aggregates'),
    h('p', { class: 'muted' }, 'Find an aggregate by its ID, or by the request ID of a command sent to it (a create sent without an ID is found from its request ID alone).'),
    findForm(ts, q, async (t, id, rid, out) => {
      if (!rid) {
        if (!id) throw new Error('give an aggregate ID or a request ID');
        go(`aggregates/${seg(t.segment)}/${seg(id)}`);
        return;
      }
      const r = await lookup(t, id, rid);
      if (!r.result) {
        out.replaceChildren(h('p', { class: 'empty', 'data-test': 'not-found' }, r.derived
          ? `No create sent without an ID used request ${rid} on ${t.name}, as the console derives its ID; a service with an ID key (--id-key-file) makes IDs the console cannot derive: give the aggregate ID too.`
          : `Request ${rid} was not appended to ${t.name} ${id}.`));
        return;
      }
      go(`aggregates/${seg(t.segment)}/${seg(r.id)}`, { v: r.result.aggregateVersion });
    }));
}

async function show(ts, segment, id, ctx) {
  const t = ts.find((x) => x.segment === segment) || { segment, name: segment };
  const base = `${seg(segment)}/${seg(id)}`;
  const current = await get(base + '/state');
  const version = current.version;
  const from = Math.max(1, version - MAX_RANGE + 1);
  const streams = version > 0 ? await get(`${base}/event/${from}/${version}`) : [];
  let snap = null; let snapErr = null;
  try { snap = await get(base + '/snapshot'); } catch (err) { snapErr = err; }
  if (ctx.stale()) return;

  const q = params();
  let at = Math.min(version, Math.max(from, parseInt(q.get('v') || String(version), 10) || version));
  const stateBox = h('div', { id: 'state-at' });
  const label = h('span', { 'data-test': 'version' }, String(at));
  const range = h('input', { type: 'range', min: from, max: version, value: at, id: 'version-range' });
  const rows = new Map();

  const showAt = async (v) => {
    at = Math.min(version, Math.max(from, v));
    label.textContent = String(at);
    range.value = at;
    for (const [rv, tr] of rows) tr.classList.toggle('selected', rv === at);
    try {
      const s = at === version ? current : await get(`${base}/state/${at}`);
      if (label.textContent !== String(at)) return;
      stateBox.replaceChildren(h('p', { class: 'muted' }, `version ${s.version}`, s.deleted ? ' (deleted)' : '', s.eventTime ? ' · ' + time(s.eventTime) : ''),
        json(s.state, 'state'));
      stateBox.dataset.version = String(s.version);
    } catch (err) { stateBox.replaceChildren(errorBox(err)); }
  };
  range.addEventListener('input', () => showAt(Number(range.value)));

  const table = h('table', { class: 'list', id: 'streams' },
    h('thead', {}, h('tr', {}, ['Version', 'Time', 'Events', 'Request ID', 'Command ID', 'Principal'].map((x) => h('th', {}, x)))),
    h('tbody', {}, streams.map((s) => {
      const tr = h('tr', { 'data-test': 'stream', 'data-version': s.version, class: 'clickable', onclick: () => showAt(s.version) },
        h('td', { class: 'num' }, String(s.version)), h('td', {}, time(s.createTime)),
        h('td', {}, (s.events || []).map((ev) => h('details', {}, h('summary', {}, ev.name), json(ev.body)))),
        h('td', {}, h('code', {}, s.requestId)), h('td', {}, h('code', {}, s.commandId)),
        h('td', {}, (s.header && s.header['factum.principal']) || s.ownerId || ''));
      rows.set(s.version, tr);
      return tr;
    })));

  const snapBox = h('div', { id: 'snapshot' });
  const showSnap = (sn, err) => {
    if (sn) {
      snapBox.replaceChildren(h('p', {}, 'version ', h('strong', { 'data-test': 'snapshot-version' }, String(sn.version)), ' · saved ', h('span', { 'data-test': 'snapshot-time' }, time(sn.snapshotTime))), json(sn.state));
    } else {
      snapBox.replaceChildren(err && err.status === 404 ? h('p', { class: 'muted' }, 'No snapshot saved.') : errorBox(err));
    }
  };
  showSnap(snap, snapErr);

  const regenerate = async () => {
    if (!await confirm('Regenerate the snapshot', `Fold ${t.name} ${id} from its whole history and save the snapshot, replacing the stored one?`)) return;
    try { const sn = await put(base + '/snapshot', {}); showSnap(sn); toast(`Snapshot regenerated at version ${sn.version}`, 'ok'); } catch (err) { toast(err.message, 'bad'); }
  };
  const remove = async () => {
    if (!await confirm('Delete the aggregate', `Delete ${t.name} ${id}? Its history is kept; it can be recovered.`)) return;
    try { await del(base); toast('Deleted', 'ok'); go(`aggregates/${seg(segment)}/${seg(id)}`); } catch (err) { toast(err.message, 'bad'); }
  };
  const recover = async () => {
    if (!await confirm('Recover the aggregate', `Recover the deleted ${t.name} ${id}?`)) return;
    try { await put(base + '/recover', {}); toast('Recovered', 'ok'); go(`aggregates/${seg(segment)}/${seg(id)}`); } catch (err) { toast(err.message, 'bad'); }
  };

  mount(h('p', {}, h('a', { href: '#/aggregates' }, '← Aggregates')),
    h('h1', {}, t.name, ' ', h('code', { 'data-test': 'aggregate-id' }, id), current.deleted ? h('span', { class: 'badge b-deleted' }, 'deleted') : null),
    h('div', { class: 'actions' },
      current.deleted ? h('button', { type: 'button', 'data-test': 'recover', onclick: recover }, 'Recover')
        : h('button', { type: 'button', 'data-test': 'delete', class: 'danger', onclick: remove }, 'Delete')),
    h('div', { class: 'grid' },
      h('section', { class: 'card' }, h('h2', {}, 'State at version ', label, ` of ${version}`),
        h('div', { class: 'stepper' },
          h('button', { type: 'button', 'data-test': 'prev-version', onclick: () => showAt(at - 1) }, '◀'),
          range,
          h('button', { type: 'button', 'data-test': 'next-version', onclick: () => showAt(at + 1) }, '▶')),
        stateBox),
      h('section', { class: 'card' }, h('h2', {}, 'Snapshot'), snapBox,
        h('button', { type: 'button', 'data-test': 'regenerate', onclick: regenerate }, 'Regenerate snapshot')),
      h('section', { class: 'card wide' }, h('h2', {}, 'Event stream'),
        from > 1 ? h('p', { class: 'muted' }, `the last ${MAX_RANGE} versions`) : null, table)));
  await showAt(at);
}
