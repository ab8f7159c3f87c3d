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

let typesPromise = null;

/**
 * types lists the public aggregate types the API routes, read from its
 * OpenAPI document: [{segment, name, context, aggregate}].
 */
export function types() {
  if (!typesPromise) {
    typesPromise = get('openapi.json', { tenanted: false }).then((doc) => {
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
    }).catch((e) => { typesPromise = null; throw e; });
  }
  return typesPromise;
}
