// The Prometheus text exposition format (version 0.0.4), read in the
// browser: a parser, and the arithmetic the overview needs over two
// scrapes (counter deltas that survive a restart of the service, and
// quantiles from histogram buckets as histogram_quantile computes them).

const SUFFIXES = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

function parseValue(s) {
  switch (s) {
    case 'NaN': return NaN;
    case '+Inf': case 'Inf': return Infinity;
    case '-Inf': return -Infinity;
    default: {
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return undefined;
      return Number(s);
    }
  }
}

function unescape(s, quotes) {
  return s.replace(quotes ? /\\([\\"n])/g : /\\([\\n])/g, (_, c) => (c === 'n' ? '\n' : c));
}

// parseLabels reads `{a="x",b="y"}` from line at i; it answers the
// labels and the index after '}', or null when malformed.
function parseLabels(line, i) {
  const labels = {};
  i++; // '{'
  for (;;) {
    while (line[i] === ' ' || line[i] === ',') i++;
    if (line[i] === '}') return { labels, next: i + 1 };
    const m = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
    if (!m) return null;
    const name = m[0];
    i += name.length;
    while (line[i] === ' ') i++;
    if (line[i] !== '=') return null;
    i++;
    while (line[i] === ' ') i++;
    if (line[i] !== '"') return null;
    i++;
    let raw = '';
    for (;;) {
      if (i >= line.length) return null;
      const c = line[i];
      if (c === '\\') { raw += c + (line[i + 1] ?? ''); i += 2; continue; }
      if (c === '"') { i++; break; }
      raw += c; i++;
    }
    labels[name] = unescape(raw, true);
    while (line[i] === ' ') i++;
    if (line[i] !== ',' && line[i] !== '}') return null;
  }
}

/**
 * parse reads the text format: it answers {families, errors}, families a
 * Map from a metric family's name to {name, type, help, samples}, each
 * sample {name, labels, value}; a histogram's _bucket, _sum and _count
 * samples belong to its family. errors lists the 1-based numbers of the
 * lines it could not read (they are skipped, never thrown).
 */
export function parse(text) {
  const families = new Map();
  const errors = [];
  const family = (name) => {
    let f = families.get(name);
    if (!f) { f = { name, type: 'untyped', help: '', samples: [] }; families.set(name, f); }
    return f;
  };
  // owner finds the family a sample belongs to: its own name, or a
  // declared histogram or summary the name is a suffix of.
  const owner = (name) => {
    if (families.has(name) && families.get(name).type !== 'histogram') return families.get(name);
    for (const [type, sufs] of Object.entries(SUFFIXES)) {
      for (const s of sufs) {
        if (!name.endsWith(s)) continue;
        const f = families.get(name.slice(0, -s.length));
        if (f && f.type === type) return f;
      }
    }
    return family(name);
  };
  const lines = String(text).split('\n');
  lines.forEach((raw, n) => {
    const line = raw.replace(/\r$/, '').trim();
    if (line === '') return;
    if (line[0] === '#') {
      const m = /^#\s*(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$/.exec(line);
      if (!m) return; // an ordinary comment
      const f = family(m[2]);
      if (m[1] === 'HELP') f.help = unescape(m[3] || '', false);
      else f.type = (m[3] || 'untyped').trim();
      return;
    }
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!m) { errors.push(n + 1); return; }
    const name = m[0];
    let i = name.length;
    let labels = {};
    while (line[i] === ' ') i++;
    if (line[i] === '{') {
      const l = parseLabels(line, i);
      if (!l) { errors.push(n + 1); return; }
      labels = l.labels;
      i = l.next;
    }
    const rest = line.slice(i).trim().split(/\s+/);
    const value = parseValue(rest[0] || '');
    if (value === undefined || rest.length > 2 || (rest.length === 2 && !/^-?\d+$/.test(rest[1]))) {
      errors.push(n + 1);
      return;
    }
    owner(name).samples.push({ name, labels, value });
  });
  return { families, errors };
}

/** labelKey is a stable key of labels, without the names in omit. */
export function labelKey(labels, omit = []) {
  return Object.keys(labels).filter((k) => !omit.includes(k)).sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`).join(',');
}

/**
 * histograms groups a histogram family's samples by their labels (le
 * aside): [{labels, key, buckets: [[le, cumulative count]] by le, sum,
 * count}]. A family that is absent answers [].
 */
export function histograms(family) {
  if (!family) return [];
  const by = new Map();
  for (const s of family.samples) {
    const labels = { ...s.labels };
    delete labels.le;
    const key = labelKey(labels);
    if (!by.has(key)) by.set(key, { labels, key, buckets: [], sum: 0, count: 0 });
    const hg = by.get(key);
    if (s.name.endsWith('_bucket')) {
      const le = parseValue(s.labels.le ?? '');
      if (le !== undefined && !Number.isNaN(le)) hg.buckets.push([le, s.value]);
    } else if (s.name.endsWith('_sum')) hg.sum = s.value;
    else if (s.name.endsWith('_count')) hg.count = s.value;
  }
  for (const hg of by.values()) hg.buckets.sort((a, b) => a[0] - b[0]);
  return [...by.values()];
}

/**
 * counterDelta is how much a counter grew from prev to cur; a counter
 * that went down was reset (the service restarted), so it grew by cur.
 */
export function counterDelta(prev, cur) {
  if (prev === undefined || prev === null || Number.isNaN(prev)) return cur;
  return cur >= prev ? cur - prev : cur;
}

/**
 * histogramDelta is the histogram of the observations between two
 * scrapes of one series (prev may be absent: everything since the
 * start). A count or bucket that went down means a reset: cur as it is.
 */
export function histogramDelta(prev, cur) {
  if (!prev) return cur;
  const before = new Map(prev.buckets);
  const reset = cur.count < prev.count || cur.buckets.some(([le, c]) => c < (before.get(le) ?? 0));
  if (reset) return cur;
  return {
    ...cur,
    buckets: cur.buckets.map(([le, c]) => [le, c - (before.get(le) ?? 0)]),
    sum: cur.sum - prev.sum,
    count: cur.count - prev.count,
  };
}

/** mergeHistograms adds histograms of the same buckets (say, all outcomes of a stage). */
export function mergeHistograms(list) {
  const buckets = new Map();
  let sum = 0; let count = 0;
  for (const hg of list) {
    for (const [le, c] of hg.buckets) buckets.set(le, (buckets.get(le) || 0) + c);
    sum += hg.sum; count += hg.count;
  }
  return { buckets: [...buckets.entries()].sort((a, b) => a[0] - b[0]), sum, count };
}

/**
 * quantile estimates the q-quantile (0 ≤ q ≤ 1) of cumulative buckets
 * [[le, count]] as Prometheus' histogram_quantile does: linear within
 * the bucket the rank falls in, the lowest bucket starting at 0, and a
 * rank in the +Inf bucket answering the highest finite bound. No
 * observations (or no buckets) answer NaN.
 */
export function quantile(q, buckets) {
  if (!buckets || buckets.length === 0 || Number.isNaN(q)) return NaN;
  const total = buckets[buckets.length - 1][0] === Infinity ? buckets[buckets.length - 1][1] : NaN;
  if (!(total > 0)) return NaN;
  if (q <= 0) return buckets[0][0] > 0 ? 0 : buckets[0][0];
  if (q >= 1) q = 1;
  const rank = q * total;
  let prevLe = 0; let prevCount = 0;
  for (let i = 0; i < buckets.length; i++) {
    const [le, c] = buckets[i];
    if (c >= rank) {
      if (le === Infinity) return i > 0 ? buckets[i - 1][0] : NaN;
      if (i === 0 && le <= 0) return le;
      if (c === prevCount) return le;
      return prevLe + (le - prevLe) * ((rank - prevCount) / (c - prevCount));
    }
    prevLe = le; prevCount = c;
  }
  return NaN;
}

/** seconds renders a duration in seconds briefly: 420 µs, 3.2 ms, 1.5 s; NaN is '—'. */
export function seconds(s) {
  if (typeof s !== 'number' || Number.isNaN(s)) return '—';
  if (s === Infinity) return '∞';
  if (s < 0.001) return `${Math.round(s * 1e6)} µs`;
  if (s < 1) return `${(s * 1000).toFixed(s < 0.01 ? 1 : 0)} ms`;
  if (s < 120) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** rate renders events per second briefly: 0, 0.25, 12, 1.2k. */
export function rate(r) {
  if (typeof r !== 'number' || Number.isNaN(r)) return '—';
  if (r === 0) return '0';
  if (r < 10) return r.toFixed(2);
  if (r < 1000) return r.toFixed(0);
  return `${(r / 1000).toFixed(1)}k`;
}
