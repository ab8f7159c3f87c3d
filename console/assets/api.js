// The HTTP API client: every call goes to the console's own origin, with
// the session's credential and in the session's tenant.

const store = window.sessionStorage;

export const session = {
  get tenant() { return store.getItem('factum.tenant') || ''; },
  get credential() { return store.getItem('factum.credential') || ''; },
  get operator() { return store.getItem('factum.operator') || 'console'; },
  set(values) {
    for (const [k, v] of Object.entries(values)) {
      if (v) store.setItem('factum.' + k, v); else store.removeItem('factum.' + k);
    }
  },
};

let base = '/';

export function configure(apiBase) { base = apiBase; }

/** ApiError is an error answer of the API, with its status and body. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? `${status} ${body.code}: ${body.message}` : `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

/** headers are the session's request headers: its credential and operator. */
export function headers(extra) {
  const h = { 'Accept': 'application/json', ...extra };
  const c = session.credential;
  if (c) {
    // A JWT has three dot-separated parts; anything else is an API key.
    if (c.split('.').length === 3) h['Authorization'] = 'Bearer ' + c; else h['X-API-Key'] = c;
  }
  h['Command-Operator'] = session.operator;
  return h;
}

/** url returns the path of an API route in the session's tenant. */
export function url(path, { tenanted = true } = {}) {
  const t = session.tenant;
  const p = path.replace(/^\//, '');
  return tenanted && t ? `${base}tenant/${encodeURIComponent(t)}/${p}` : base + p;
}

/** call sends a request and returns the decoded JSON answer. */
export async function call(method, path, body, opts = {}) {
  const init = { method, headers: headers(opts.headers) };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  const res = await fetch(url(path, opts), init);
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = { code: 'BadResponse', message: text.slice(0, 200) }; }
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export const get = (path, opts) => call('GET', path, undefined, opts);
export const post = (path, body, opts) => call('POST', path, body, opts);
export const put = (path, body, opts) => call('PUT', path, body, opts);
export const del = (path, opts) => call('DELETE', path, undefined, opts);

/** seg encodes one path segment. */
export const seg = (s) => encodeURIComponent(s);

let docPromise = null;

/** openapi returns the API's OpenAPI document, read once per page load. */
export function openapi() {
  if (!docPromise) {
    docPromise = get('openapi.json', { tenanted: false }).catch((e) => { docPromise = null; throw e; });
  }
  return docPromise;
}

/**
 * types lists the public aggregate types the API routes, read from its
 * OpenAPI document: [{segment, name, context, aggregate}].
 */
export async function types() {
  const doc = await openapi();
  const out = [];
  for (const [p, item] of Object.entries(doc.paths || {})) {
    const m = /^\/([^/{]+)\/\{id\}\/state$/.exec(p);
    if (!m || !item.get) continue;
    const name = (item.get.tags || [m[1]])[0];
    const [context, aggregate] = name.includes('.') ? name.split('.', 2) : ['', name];
    out.push({ segment: m[1], name, context, aggregate });
  }
  out.sort((a, b) => a.name.localeCompare(b.name));
  return out;
}

/**
 * projections lists, from the OpenAPI document, the bounded contexts with
 * projections (those with a /{context}/projections route) and every read
 * query: [{context, projection, query, summary, params: [{name,
 * required, type, format, maximum, default, description}]}], the limit
 * parameter among them.
 */
export async function projections() {
  const doc = await openapi();
  const contexts = new Set();
  const queries = [];
  for (const [p, item] of Object.entries(doc.paths || {})) {
    const c = /^\/([^/{]+)\/projections$/.exec(p);
    if (c && item.get) contexts.add(c[1]);
    const m = /^\/([^/{]+)\/projection\/([^/{]+)\/([^/{]+)$/.exec(p);
    if (!m || !item.get) continue;
    contexts.add(m[1]);
    const params = (item.get.parameters || []).filter((x) => x && x.in === 'query').map((x) => ({
      name: x.name, required: !!x.required, description: x.description || '',
      type: (x.schema && x.schema.type) || 'string', format: x.schema && x.schema.format,
      maximum: x.schema && x.schema.maximum, default: x.schema && x.schema.default,
    }));
    queries.push({ context: m[1], projection: m[2], query: m[3], summary: item.get.summary || '', params });
  }
  queries.sort((a, b) => `${a.context}/${a.projection}/${a.query}`.localeCompare(`${b.context}/${b.projection}/${b.query}`));
  return { contexts: [...contexts].sort(), queries };
}
