// Cluster: the instances of a service clustered on NATS JetStream, the
// partitions each holds and those nobody holds, as the instance the
// console talks to sees them (GET /cluster, the admin's: it spans every
// tenant). A service without NATS has no such route.
import { get } from '../api.js';
import { h, mount, errorBox } from '../ui.js';
import { refusal } from './projections.js';

/** POLL_MS is how often the page reads the view again while shown. */
const POLL_MS = 5000;

const WHY = 'The cluster view spans every tenant (as the metrics do), so it is the admin\'s.';

function notClustered() {
  return h('section', { class: 'card wide', 'data-test': 'no-cluster' }, h('h2', {}, 'Not clustered'),
    h('p', {}, 'This service runs without NATS: one instance processes every command and runs every consumer, so there are no partitions or leases to show (GET /cluster answered 404 Not Found).'),
    h('p', { class: 'muted' }, 'To run several instances as one service, start each with ', h('code', {}, 'factum serve --nats-url nats://…'),
      ' (or FACTUM_NATS_URL) on one PostgreSQL database; see docs/scale-out.md.'));
}

const figure = (label, value, test) => h('div', { class: 'figure' }, h('div', { class: 'big', 'data-test': test }, value), label);

function partitionMap(v) {
  const owner = new Map();
  for (const inst of v.instances) for (const p of inst.partitions) owner.set(p, inst);
  const names = v.instances.map((i) => i.name);
  const cells = [];
  for (let p = 0; p < v.partitions; p++) {
    const inst = owner.get(p);
    const cls = !inst ? 'part unowned' : `part o${names.indexOf(inst.name) % 6}${inst.alive ? '' : ' dead'}`;
    cells.push(h('div', { class: cls, 'data-test': 'partition', 'data-partition': p, 'data-owner': inst ? inst.name : '', title: inst ? `partition ${p}: ${inst.name}` : `partition ${p}: no owner` },
      h('span', { class: 'pn' }, String(p)), h('span', { class: 'po' }, inst ? inst.name : '—')));
  }
  return h('div', { class: 'partmap' }, cells);
}

function view(v) {
  const alive = v.instances.filter((i) => i.alive).length;
  const lease = `${(v.leaseMillis / 1000).toFixed(v.leaseMillis % 1000 ? 1 : 0)} s`;
  const s = v.signals || {};
  return [
    h('div', { class: 'figures' },
      figure('context', v.context, 'context'), figure('partitions', String(v.partitions), 'partitions'),
      figure('instances alive', String(alive), 'alive'), figure('lease', lease, 'lease'),
      figure('answered by', v.instance, 'instance'),
      h('div', { class: 'figure' }, h('div', { class: 'big' }, v.connected
        ? h('span', { class: 'badge b-ok', 'data-test': 'connected' }, 'connected')
        : h('span', { class: 'badge b-bad', 'data-test': 'connected' }, 'disconnected')), 'its NATS connection')),
    h('div', { class: 'grid' },
      h('section', { class: 'card wide' }, h('h2', {}, 'Instances'),
        h('table', { class: 'list', id: 'instances' },
          h('thead', {}, h('tr', {}, ['Instance', 'Alive', 'Held', 'Partitions'].map((x) => h('th', {}, x)))),
          h('tbody', {}, v.instances.map((i) => h('tr', { 'data-test': 'instance', 'data-name': i.name, 'data-alive': String(i.alive), 'data-partitions': i.partitions.length },
            h('td', {}, h('code', {}, i.name), i.name === v.instance ? h('span', { class: 'muted' }, ' (this one)') : null),
            h('td', {}, i.alive ? h('span', { class: 'badge b-ok' }, 'alive')
              : h('span', { class: 'badge b-bad', title: `not announced within a lease (${lease}); its leases lapse, then others take its partitions over` }, 'not seen')),
            h('td', { class: 'num' }, String(i.partitions.length)),
            h('td', {}, i.partitions.length ? i.partitions.join(', ') : h('span', { class: 'muted' }, 'none'))))))),
      h('section', { class: 'card' }, h('h2', {}, 'Unowned partitions'),
        v.unowned.length
          ? [h('p', { 'data-test': 'unowned', 'data-count': v.unowned.length }, h('span', { class: 'badge b-warn' }, String(v.unowned.length)), ' ', v.unowned.join(', ')),
            h('p', { class: 'muted' }, 'No lease names them: their commands are stored and wait on the stream until an instance claims them (a command that needs an owner now is a 503 with Retry-After).')]
          : h('p', { 'data-test': 'unowned', 'data-count': 0 }, 'none: every partition has an owner')),
      h('section', { class: 'card' }, h('h2', {}, `Wait signals routed by ${v.instance}`),
        h('dl', { class: 'kv', 'data-test': 'signals' },
          [['stayed local', s.local], ['sent to another instance', s.sent], ['received from another', s.received], ['dropped', s.dropped]]
            .map(([k, n]) => [h('dt', {}, k), h('dd', { class: n && k === 'dropped' ? 'bad' : '' }, String(n ?? 0))]))),
      h('section', { class: 'card wide' }, h('h2', {}, 'Partitions by owner'), partitionMap(v))),
  ];
}

export async function render(_parts, ctx) {
  const box = h('div', { id: 'cluster', 'data-reads': '0' });
  let reads = 0;
  const load = async () => {
    let v = null; let err = null;
    try { v = await get('cluster', { tenanted: false }); } catch (e) { err = e; }
    if (ctx.stale()) return false;
    if (v) box.replaceChildren(...view(v));
    else if (err.status === 404) box.replaceChildren(notClustered());
    else box.replaceChildren(h('section', { class: 'card wide' }, err.status === 403 || err.status === 401 ? refusal(err, WHY) : errorBox(err)));
    box.dataset.reads = String(++reads);
    box.dataset.state = v ? 'view' : err.status === 404 ? 'not-clustered' : 'error';
    return !!v;
  };
  const clustered = await load();
  if (ctx.stale()) return;
  mount(h('h1', {}, 'Cluster ', h('button', { type: 'button', 'data-test': 'refresh', onclick: () => load() }, 'Refresh')),
    h('p', { class: 'muted' }, `The instances as the one answering sees them; it reads the view again every ${POLL_MS / 1000} s. Instances agree once the leases settle; while a partition changes hands they may differ for up to a lease.`),
    box);
  // Only a clustered service's view changes by itself.
  if (!clustered) return;
  const tick = () => setTimeout(async () => {
    if (ctx.stale() || !box.isConnected) return;
    await load();
    tick();
  }, POLL_MS);
  tick();
}
