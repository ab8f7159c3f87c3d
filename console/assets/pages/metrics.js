// The overview's metrics panel: it scrapes the service's Prometheus
// metrics every few seconds with the session's credential and shows
// commands/s, latency by stage and consumer lag over a recent window,
// from the differences between scrapes.
import { headers, ApiError } from '../api.js';
import { h, errorBox } from '../ui.js';
import { sparkline, bar } from '../chart.js';
import { parse, histograms, histogramDelta, mergeHistograms, counterDelta, quantile, seconds, rate } from '../prom.js';

/** POLL_MS is how often the panel scrapes; WINDOW_MS the recent window. */
export const POLL_MS = 5000;
export const WINDOW_MS = 60000;
const KEEP_MS = 5 * 60000; // the sparklines' span

const PROCESS = 'factum_command_process_duration_seconds';
const WAIT = 'factum_command_wait_duration_seconds';
const LAG_STREAMS = 'factum_consumer_lag_streams';
const LAG_SECONDS = 'factum_consumer_lag_seconds';
const LAG_ERRORS = 'factum_consumer_lag_read_errors';

// The scrapes outlive a page: coming back to the overview keeps the
// window and the sparklines.
let history = { source: '', scrapes: [] };
let loop = 0;

async function scrape(path) {
  const res = await fetch(path, { headers: headers({ Accept: 'text/plain;version=0.0.4;q=1, */*;q=0.1' }) });
  const text = await res.text();
  if (!res.ok) {
    let body = null;
    try { body = JSON.parse(text); } catch { /* a plain-text refusal */ }
    throw new ApiError(res.status, body);
  }
  return { t: Date.now(), text, families: parse(text).families };
}

// seriesByKey maps a histogram family of one scrape by its label key.
function seriesByKey(s, name) {
  return new Map(histograms(s && s.families.get(name)).map((hg) => [hg.key, hg]));
}

// windowOf is the histograms of the observations between base (absent:
// the service's start) and cur, grouped by the label group names.
function windowOf(base, cur, name, group) {
  const before = seriesByKey(base, name);
  const out = new Map();
  for (const hg of seriesByKey(cur, name).values()) {
    const k = hg.labels[group] ?? '';
    if (!out.has(k)) out.set(k, { label: k, window: [], total: [], notOk: 0 });
    const g = out.get(k);
    const d = histogramDelta(before.get(hg.key), hg);
    g.window.push(d);
    g.total.push(hg);
    const outcome = hg.labels.outcome ?? hg.labels.code;
    if (outcome !== undefined && outcome.toLowerCase() !== 'ok') g.notOk += d.count;
  }
  return [...out.values()].map((g) => {
    const w = mergeHistograms(g.window);
    return {
      label: g.label, inWindow: w.count, total: mergeHistograms(g.total).count, notOk: g.notOk,
      p50: quantile(0.5, w.buckets), p95: quantile(0.95, w.buckets),
    };
  }).sort((a, b) => a.label.localeCompare(b.label));
}

// processed counts the commands processed between two scrapes, each
// series' counter reset on its own.
function processed(prev, cur) {
  const before = seriesByKey(prev, PROCESS);
  let n = 0;
  for (const hg of seriesByKey(cur, PROCESS).values()) n += counterDelta(before.get(hg.key)?.count, hg.count);
  return n;
}

function gauges(s, name) {
  const out = new Map();
  for (const x of (s && s.families.get(name) || { samples: [] }).samples) out.set(x.labels.group ?? '', x.value);
  return out;
}

/**
 * summarize computes the panel's figures from the scrapes (oldest
 * first): the window runs from the oldest scrape within WINDOW_MS of the
 * last one to the last one; with one scrape, from the service's start.
 */
export function summarize(scrapes) {
  const cur = scrapes[scrapes.length - 1];
  const base = scrapes.slice(0, -1).find((s) => s.t >= cur.t - WINDOW_MS) || null;
  // With one scrape the window is the process's life, when the metrics
  // say when it started (process_start_time_seconds, in the server's
  // clock: the average is as good as the clocks agree).
  const started = (cur.families.get('process_start_time_seconds') || { samples: [] }).samples[0]?.value;
  const span = base ? (cur.t - base.t) / 1000 : Number.isFinite(started) ? cur.t / 1000 - started : NaN;
  const perSecond = (n) => (span > 0 ? n / span : NaN);
  const aggregates = windowOf(base, cur, PROCESS, 'aggregate').map((r) => ({ ...r, rate: perSecond(r.inWindow) }));
  const stages = windowOf(base, cur, WAIT, 'stage').map((r) => ({ ...r, rate: perSecond(r.inWindow) }));
  const inWindow = aggregates.reduce((n, r) => n + r.inWindow, 0);
  const total = aggregates.reduce((n, r) => n + r.total, 0);
  const rates = [];
  for (let i = 1; i < scrapes.length; i++) {
    const dt = (scrapes[i].t - scrapes[i - 1].t) / 1000;
    rates.push(dt > 0 ? processed(scrapes[i - 1], scrapes[i]) / dt : NaN);
  }
  const streams = gauges(cur, LAG_STREAMS);
  const secs = gauges(cur, LAG_SECONDS);
  const errs = gauges(cur, LAG_ERRORS);
  const groups = [...new Set([...streams.keys(), ...secs.keys(), ...errs.keys()])].sort();
  const lag = groups.map((group) => ({
    group, streams: streams.get(group), seconds: secs.get(group), error: errs.get(group) > 0,
    history: scrapes.map((s) => gauges(s, LAG_STREAMS).get(group)).map((v) => (v === undefined ? NaN : v)),
  }));
  return {
    span, scrapes: scrapes.length, sinceStart: !base,
    commands: { rate: perSecond(inWindow), inWindow, total, rates },
    aggregates, stages, lag,
    known: cur.families.has(PROCESS) || cur.families.has(WAIT) || cur.families.has(LAG_STREAMS),
  };
}

function num(v) { return v === undefined || Number.isNaN(v) ? '—' : String(v); }

function latencyTable(rows, test, head) {
  if (rows.length === 0) return h('p', { class: 'empty' }, 'Nothing observed yet.');
  const max = Math.max(0, ...rows.map((r) => (Number.isFinite(r.p95) ? r.p95 : 0)));
  return h('table', { class: 'list metrics' },
    h('thead', {}, h('tr', {}, h('th', {}, head), h('th', { class: 'num' }, '/s'), h('th', { class: 'num' }, 'in window'),
      h('th', { class: 'num' }, 'not ok'), h('th', { class: 'num' }, 'p50'), h('th', { class: 'num' }, 'p95'), h('th', {}, ''),
      h('th', { class: 'num' }, 'since start'))),
    h('tbody', {}, rows.map((r) => h('tr', {
      'data-test': `${test}-${r.label}`, 'data-total': r.total, 'data-window': r.inWindow,
      'data-p50': Number.isFinite(r.p50) ? r.p50 : '', 'data-p95': Number.isFinite(r.p95) ? r.p95 : '',
    },
    h('th', {}, h('code', {}, r.label || '(none)')), h('td', { class: 'num' }, rate(r.rate)), h('td', { class: 'num' }, String(r.inWindow)),
    h('td', { class: 'num' + (r.notOk > 0 ? ' bad' : '') }, String(r.notOk)),
    h('td', { class: 'num p50' }, seconds(r.p50)), h('td', { class: 'num p95' }, seconds(r.p95)),
    h('td', {}, bar(r.p95, max, { cls: 'latency' })), h('td', { class: 'num' }, String(r.total))))));
}

function lagTable(rows) {
  if (rows.length === 0) return h('p', { class: 'empty' }, 'No consumer groups report a lag.');
  return h('table', { class: 'list metrics' },
    h('thead', {}, h('tr', {}, h('th', {}, 'consumer group'), h('th', { class: 'num' }, 'streams behind'),
      h('th', { class: 'num' }, 'oldest unconsumed'), h('th', {}, 'streams behind, last 5 min'))),
    h('tbody', {}, rows.map((r) => h('tr', {
      'data-test': 'lag-' + r.group, 'data-streams': num(r.streams), 'data-seconds': num(r.seconds),
      class: r.streams > 0 ? 'behind' : '',
    },
    h('th', {}, h('code', {}, r.group), r.error ? h('span', { class: 'badge b-failed', title: 'the lag could not be read at this scrape' }, 'read error') : null),
    h('td', { class: 'num streams' }, r.streams === 1000 ? '≥ 1000' : num(r.streams)),
    h('td', { class: 'num seconds' }, r.seconds === undefined ? '—' : r.seconds === 0 ? 'caught up' : seconds(r.seconds)),
    h('td', {}, sparkline(r.history, { title: `${r.group}: streams behind per scrape`, cls: 'lag' }))))));
}

function windowText(sum) {
  if (sum.sinceStart) return 'since the service started: one scrape so far, rates are averages over its life (the window fills as the page polls)';
  return `last ${Math.round(sum.span)} s (${sum.scrapes} scrapes, every ${POLL_MS / 1000} s)`;
}

function refusal(err) {
  if (err && err.status === 401) return h('p', { class: 'muted', 'data-test': 'metrics-refused' }, 'The metrics need a credential: enter one above.');
  if (err && err.status === 403) return h('p', { class: 'muted', 'data-test': 'metrics-refused' }, 'Your credential may not read the metrics.');
  return errorBox(err);
}

function body(state) {
  const { sum, err, text, rawOpen } = state;
  const raw = h('details', { class: 'raw', 'data-test': 'raw-metrics', open: rawOpen },
    h('summary', {}, 'raw metrics'), h('pre', { class: 'json' }, text || ''));
  raw.addEventListener('toggle', () => { state.rawOpen = raw.open; });
  const failed = err ? refusal(err) : null;
  if (!sum) return [failed, text ? raw : null];
  if (!sum.known) {
    return [failed, h('p', { class: 'muted' }, 'The metrics hold no factum series (is it the Prometheus text of factum serve?).'), raw];
  }
  const c = sum.commands;
  return [
    failed,
    h('p', { class: 'muted', 'data-test': 'metrics-window' }, windowText(sum)),
    h('div', { class: 'figures' },
      h('div', { class: 'figure' }, h('span', { class: 'big', 'data-test': 'commands-rate', 'data-value': Number.isFinite(c.rate) ? c.rate : '' }, rate(c.rate)), ' commands/s'),
      h('div', { class: 'figure' }, h('span', { class: 'big', 'data-test': 'commands-window' }, String(c.inWindow)), ' in the window'),
      h('div', { class: 'figure' }, h('span', { class: 'big', 'data-test': 'commands-total' }, String(c.total)), ' processed since start'),
      h('div', { class: 'figure' }, sparkline(c.rates, { width: 180, height: 32, title: 'commands/s between scrapes, last 5 min' }))),
    h('h3', {}, 'Commands by aggregate type (processing: load, decide, append)'),
    latencyTable(sum.aggregates, 'aggregate', 'aggregate'),
    h('h3', {}, 'Latency by stage (a command over HTTP, until the stage it waited for)'),
    latencyTable(sum.stages, 'stage', 'stage'),
    h('h3', {}, 'Consumer lag'),
    lagTable(sum.lag),
    raw,
  ];
}

/**
 * panel answers the overview's metrics card for the source path ('' when
 * metrics are off: a note instead), after its first scrape; it keeps
 * scraping every POLL_MS while the page is current (ctx.stale false) and
 * the card is in the document.
 */
export async function panel(source, ctx) {
  if (!source) {
    return h('p', { class: 'muted note', 'data-test': 'metrics-off' },
      'Metrics are off (console.Config.Metrics is unset; factum serve sets it with --metrics): commands/s, latency by stage and consumer lag show here when they are on.');
  }
  if (history.source !== source) history = { source, scrapes: [] };
  const state = { sum: null, err: null, text: '', rawOpen: false };
  const card = h('section', { class: 'card wide', 'data-test': 'metrics' });
  const draw = () => card.replaceChildren(h('h2', {}, 'Throughput, latency, consumer lag'), ...body(state).filter(Boolean));
  const tick = async () => {
    try {
      const s = await scrape(source);
      const hs = history.scrapes;
      hs.push(s);
      while (hs.length > 1 && hs[0].t < s.t - KEEP_MS) hs.shift();
      state.err = null; state.text = s.text; state.sum = summarize(hs);
    } catch (err) {
      state.err = err;
    }
    draw();
  };
  await tick();
  const mine = ++loop;
  const next = () => setTimeout(async () => {
    if (mine !== loop || ctx.stale() || !card.isConnected) return;
    // A hidden tab does not scrape; the window resumes when it shows.
    if (!document.hidden) await tick();
    next();
  }, POLL_MS);
  next();
  return card;
}
