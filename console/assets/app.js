// The console's entry: settings, session, navigation and the router.
import { configure, session, get } from './api.js';
import { mount, errorBox, h, toast } from './ui.js';
import * as overview from './pages/overview.js';
import * as failures from './pages/failures.js';
import * as aggregates from './pages/aggregates.js';
import * as query from './pages/query.js';
import * as requests from './pages/requests.js';
import * as projections from './pages/projections.js';
import * as cluster from './pages/cluster.js';

const pages = { overview, failures, aggregates, query, requests, projections, cluster };
export const settings = { title: 'factum', api: '/', metrics: '' };

async function loadSettings() {
  try {
    const res = await fetch('config.json', { headers: { Accept: 'application/json' } });
    if (res.ok) Object.assign(settings, await res.json());
  } catch { /* the defaults serve the console over the same origin */ }
  configure(settings.api);
  document.getElementById('title').textContent = settings.title;
  document.title = settings.title + ' · console';
}

// principal is who the session's credential is (GET /principal): a
// principal that is no admin may pick only the tenants it holds; an admin
// (or an open API) any.
let principal = null;

async function loadPrincipal() {
  const who = document.getElementById('who');
  const list = document.getElementById('tenants');
  principal = null;
  list.replaceChildren();
  try {
    principal = await get('principal');
  } catch (err) {
    who.textContent = err.status === 401 ? 'a credential is required' : err.status === 404 ? 'tenant not held' : '';
    return;
  }
  who.textContent = principal.open ? 'open API (no credentials)'
    : `${principal.name}${principal.admin ? ' · admin' : ''} · ${principal.roles.join(', ')}`;
  for (const t of principal.tenants) list.append(h('option', { value: t }));
  const field = document.getElementById('tenant');
  if (!principal.tenant && !session.tenant && !principal.open && !principal.admin && principal.tenants.length) {
    // A credential of several tenants, none of them the default one, acts
    // in no tenant until one is picked: the console picks its first, as a
    // credential of one tenant acts in that one.
    session.set({ tenant: principal.tenants[0] });
    field.value = principal.tenants[0];
    principal.tenant = principal.tenants[0];
  }
  field.placeholder = principal.tenant;
}

function bindSession() {
  const form = document.getElementById('session');
  const tenant = document.getElementById('tenant');
  const credential = document.getElementById('credential');
  const operator = document.getElementById('operator');
  tenant.value = session.tenant;
  credential.value = session.credential;
  operator.value = window.sessionStorage.getItem('factum.operator') || '';
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const want = tenant.value.trim();
    // Who the credential is decides which tenants it may pick: learn it in
    // the credential's home tenant first.
    session.set({ tenant: '', credential: credential.value.trim(), operator: operator.value.trim() });
    await loadPrincipal();
    if (want && principal && !principal.open && !principal.admin && !principal.tenants.includes(want)) {
      toast(`Your credential holds only the tenants ${principal.tenants.join(', ')}.`, 'bad');
      tenant.value = session.tenant;
      route();
      return;
    }
    if (want) {
      session.set({ tenant: want });
      await loadPrincipal();
    }
    route();
  });
}

let current = 0;

/** route renders the page the location's hash names. */
async function route() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path] = hash.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const name = pages[parts[0]] ? parts[0] : 'overview';
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.dataset.page === name);
  }
  const token = ++current;
  mount(h('p', { class: 'loading' }, 'Loading…'));
  try {
    await pages[name].render(parts.slice(1), { stale: () => token !== current, settings });
  } catch (err) {
    if (token === current) mount(h('h1', {}, 'Something went wrong'), errorBox(err));
  }
  if (token === current) document.body.dataset.ready = name;
}

await loadSettings();
bindSession();
await loadPrincipal();
window.addEventListener('hashchange', route);
route();
