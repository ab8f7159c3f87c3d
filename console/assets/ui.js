// Small DOM helpers shared by the pages. Text always goes in as text
// nodes, never as HTML, so nothing the API answers can run as script.

/** h builds an element: h('a', {href: '#'}, 'text', child). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** mount replaces the main area's content. */
export function mount(...children) {
  const main = document.getElementById('main');
  main.replaceChildren();
  append(main, children);
  return main;
}

/** json renders a value as indented JSON. */
export function json(v, cls) {
  return h('pre', { class: 'json ' + (cls || '') }, JSON.stringify(v, null, 2));
}

/** time renders epoch milliseconds or an RFC 3339 string in UTC. */
export function time(v) {
  if (v === undefined || v === null || v === '' || v === 0) return '';
  const d = typeof v === 'number' ? new Date(v) : new Date(v);
  if (Number.isNaN(d.getTime())) return String(v);
  return d.toISOString().replace('T', ' ').replace('Z', ' UTC');
}

/** duration renders milliseconds as the API's duration form (3m, 2m0s). */
export function duration(ms) {
  if (!ms) return '0s';
  const s = ms / 1000;
  if (s % 3600 === 0) return `${s / 3600}h`;
  if (s % 60 === 0) return `${s / 60}m`;
  return `${s}s`;
}

/** errorBox shows an API or network error. */
export function errorBox(err) {
  const body = err && err.body;
  return h('div', { class: 'error', role: 'alert' },
    h('strong', {}, body && body.code ? body.code : 'Error'), ' ',
    body && body.message ? body.message : String(err && err.message ? err.message : err));
}

/** toast shows a short message. */
export function toast(text, kind) {
  const t = document.getElementById('toast');
  t.textContent = text;
  t.className = 'toast ' + (kind || '');
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 4000);
}

/**
 * confirm asks for confirmation in the page's dialog (not window.confirm,
 * which a browser may suppress); extra is an optional element shown in
 * it. It resolves true when confirmed.
 */
export function confirm(title, text, extra) {
  const d = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  const x = document.getElementById('confirm-extra');
  x.replaceChildren();
  if (extra) x.append(extra);
  return new Promise((resolve) => {
    d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true });
    d.returnValue = '';
    d.showModal();
  });
}

/** field is a labelled form input. */
export function field(label, input) {
  return h('label', { class: 'field' }, h('span', {}, label), input);
}

/** select is a <select> of [value, label] pairs (or plain values). */
export function select(attrs, options, value) {
  const s = h('select', attrs);
  for (const o of options) {
    const [v, l] = Array.isArray(o) ? o : [o, o];
    const opt = h('option', { value: v }, l);
    if (String(v) === String(value ?? '')) opt.selected = true;
    s.append(opt);
  }
  return s;
}

/** pager renders previous/next links around "page n of m". */
export function pager(page, size, total, go) {
  const pages = Math.max(1, Math.ceil(total / size));
  return h('div', { class: 'pager' },
    h('button', { type: 'button', disabled: page <= 1, onclick: () => go(page - 1), 'data-test': 'prev-page' }, '← Previous'),
    h('span', {}, ` page ${page} of ${pages} (${total} in all) `),
    h('button', { type: 'button', disabled: page >= pages, onclick: () => go(page + 1), 'data-test': 'next-page' }, 'Next →'));
}

/** badge renders a status as a coloured label. */
export function badge(text) {
  return h('span', { class: 'badge b-' + String(text).toLowerCase() }, text);
}

/** params reads the hash route's query parameters. */
export function params() {
  const q = location.hash.split('?')[1] || '';
  return new URLSearchParams(q);
}

/** go navigates to a hash route with query parameters. */
export function go(path, q) {
  const s = q ? new URLSearchParams(Object.entries(q).filter(([, v]) => v !== '' && v !== undefined && v !== null)).toString() : '';
  const target = '#/' + path + (s ? '?' + s : '');
  if (location.hash === target) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = target;
}
