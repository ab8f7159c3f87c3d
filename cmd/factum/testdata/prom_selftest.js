// The self-test of the console's Prometheus parser (console/assets/prom.js)
// and of the overview's window arithmetic (pages/metrics.js), evaluated in
// the console's page by TestConsoleInBrowser. It answers the failures as
// a JSON list of strings: [] is a pass.
(async () => {
  const p = await import('/console/prom.js');
  const m = await import('/console/pages/metrics.js');
  const fails = [];
  const same = (a, b) => {
    if (typeof a === 'number' && typeof b === 'number') {
      return (Number.isNaN(a) && Number.isNaN(b)) || a === b || Math.abs(a - b) < 1e-9 * Math.max(1, Math.abs(b));
    }
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
    if (a && b && typeof a === 'object' && typeof b === 'object') {
      const ka = Object.keys(a).sort(); const kb = Object.keys(b).sort();
      return same(ka, kb) && ka.every((k) => same(a[k], b[k]));
    }
    return a === b;
  };
  const show = (v) => JSON.stringify(v, (_, x) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
  const eq = (name, got, want) => { if (!same(got, want)) fails.push(`${name}: got ${show(got)}, want ${show(want)}`); };

  // Counters, gauges, help and type lines, escapes, special values.
  {
    const { families, errors } = p.parse([
      '# HELP factum_http_requests_total HTTP requests answered, by "route";\\n second line \\\\ done.',
      '# TYPE factum_http_requests_total counter',
      'factum_http_requests_total{method="POST",route="POST /{aggregate}/{id}/{command}",status="200"} 7',
      'factum_http_requests_total{ method = "GET" , route="a\\"b\\\\c\\nd",status="404",} 2 1700000000000',
      '# an ordinary comment',
      '',
      '# TYPE g gauge',
      'g NaN',
      'g{x="inf"} +Inf',
      'g{x="-inf"} -Inf',
      'g{x="exp"} 1.5e-05',
      'untyped_thing 3\r',
    ].join('\n'));
    eq('no errors', errors, []);
    const c = families.get('factum_http_requests_total');
    eq('counter type', c.type, 'counter');
    eq('help unescaped', c.help, 'HTTP requests answered, by "route";\n second line \\ done.');
    eq('counter samples', c.samples.map((s) => [s.labels, s.value]), [
      [{ method: 'POST', route: 'POST /{aggregate}/{id}/{command}', status: '200' }, 7],
      [{ method: 'GET', route: 'a"b\\c\nd', status: '404' }, 2],
    ]);
    eq('gauge values', families.get('g').samples.map((s) => s.value), [NaN, Infinity, -Infinity, 1.5e-5]);
    eq('untyped family', [families.get('untyped_thing').type, families.get('untyped_thing').samples[0].value], ['untyped', 3]);
  }

  // Malformed lines are skipped and reported, the rest is read.
  {
    const { families, errors } = p.parse([
      'ok 1',
      'bad{a="x"',
      'bad{a=x} 1',
      'bad{1a="x"} 1',
      'bad 1 2 3',
      'bad one',
      '{a="x"} 1',
      'ok2 2',
    ].join('\n'));
    eq('malformed lines', errors, [2, 3, 4, 5, 6, 7]);
    eq('good lines still read', [families.get('ok').samples[0].value, families.get('ok2').samples[0].value], [1, 2]);
    eq('no family from a bad line', families.has('bad'), false);
    eq('empty text', p.parse('').families.size, 0);
  }

  // Histograms: buckets, sum and count belong to the family, by labels.
  const histText = (okCounts, ms) => [
    '# HELP factum_command_wait_duration_seconds Latency.',
    '# TYPE factum_command_wait_duration_seconds histogram',
    `factum_command_wait_duration_seconds_bucket{outcome="ok",stage="PROCESSED",le="+Inf"} ${okCounts[2]}`,
    `factum_command_wait_duration_seconds_bucket{outcome="ok",stage="PROCESSED",le="0.001"} ${okCounts[0]}`,
    `factum_command_wait_duration_seconds_bucket{outcome="ok",stage="PROCESSED",le="0.01"} ${okCounts[1]}`,
    `factum_command_wait_duration_seconds_sum{outcome="ok",stage="PROCESSED"} ${ms}`,
    `factum_command_wait_duration_seconds_count{outcome="ok",stage="PROCESSED"} ${okCounts[2]}`,
    'factum_command_wait_duration_seconds_bucket{outcome="timeout",stage="PROCESSED",le="0.001"} 0',
    'factum_command_wait_duration_seconds_bucket{outcome="timeout",stage="PROCESSED",le="0.01"} 0',
    'factum_command_wait_duration_seconds_bucket{outcome="timeout",stage="PROCESSED",le="+Inf"} 1',
    'factum_command_wait_duration_seconds_sum{outcome="timeout",stage="PROCESSED"} 30',
    'factum_command_wait_duration_seconds_count{outcome="timeout",stage="PROCESSED"} 1',
    '# TYPE other_count counter',
    'other_count 4',
  ].join('\n');
  {
    const { families, errors } = p.parse(histText([2, 5, 6], 0.02));
    eq('histogram errors', errors, []);
    const f = families.get('factum_command_wait_duration_seconds');
    eq('histogram type', f.type, 'histogram');
    eq('suffixed samples kept in the family', f.samples.length, 10);
    eq('no family per suffix', families.has('factum_command_wait_duration_seconds_bucket'), false);
    eq('a counter named _count is its own family', families.get('other_count').samples[0].value, 4);
    const hs = p.histograms(f);
    eq('series by labels', hs.map((x) => x.labels), [{ outcome: 'ok', stage: 'PROCESSED' }, { outcome: 'timeout', stage: 'PROCESSED' }]);
    eq('buckets sorted by le', hs[0].buckets, [[0.001, 2], [0.01, 5], [Infinity, 6]]);
    eq('sum and count', [hs[0].sum, hs[0].count, hs[1].count], [0.02, 6, 1]);
    eq('merged', p.mergeHistograms(hs), { buckets: [[0.001, 2], [0.01, 5], [Infinity, 7]], sum: 30.02, count: 7 });
    eq('absent family', p.histograms(undefined), []);
  }

  // Deltas between scrapes, and resets.
  eq('counter grows', p.counterDelta(5, 9), 4);
  eq('counter reset', p.counterDelta(9, 2), 2);
  eq('counter first seen', p.counterDelta(undefined, 3), 3);
  {
    const a = { labels: {}, key: '', buckets: [[0.1, 1], [1, 2], [Infinity, 2]], sum: 0.5, count: 2 };
    const b = { labels: {}, key: '', buckets: [[0.1, 4], [1, 6], [Infinity, 7]], sum: 9.5, count: 7 };
    const d = p.histogramDelta(a, b);
    eq('histogram delta', [d.buckets, d.sum, d.count], [[[0.1, 3], [1, 4], [Infinity, 5]], 9, 5]);
    const r = { labels: {}, key: '', buckets: [[0.1, 1], [1, 1], [Infinity, 1]], sum: 0.05, count: 1 };
    eq('histogram reset answers the new one', p.histogramDelta(b, r), r);
    eq('histogram since start', p.histogramDelta(undefined, b), b);
  }

  // Quantiles as histogram_quantile computes them.
  const bk = [[0.1, 5], [0.5, 10], [Infinity, 10]];
  eq('p50 at a bucket bound', p.quantile(0.5, bk), 0.1);
  eq('p75 interpolated', p.quantile(0.75, bk), 0.3);
  eq('p10 from zero', p.quantile(0.1, bk), 0.02);
  eq('rank in +Inf answers the highest bound', p.quantile(0.95, [[0.1, 5], [0.5, 10], [Infinity, 20]]), 0.5);
  eq('empty histogram', p.quantile(0.5, [[0.1, 0], [Infinity, 0]]), NaN);
  eq('no buckets', p.quantile(0.5, []), NaN);
  eq('no +Inf bucket', p.quantile(0.5, [[0.1, 3]]), NaN);
  eq('only +Inf', p.quantile(0.5, [[Infinity, 3]]), NaN);

  // Formatting.
  eq('seconds', [p.seconds(0.00042), p.seconds(0.0032), p.seconds(0.25), p.seconds(1.5), p.seconds(NaN)], ['420 µs', '3.2 ms', '250 ms', '1.50 s', '—']);
  eq('rate', [p.rate(0), p.rate(0.25), p.rate(12.4), p.rate(1234), p.rate(NaN)], ['0', '0.25', '12', '1.2k', '—']);

  // The overview's window: rates from two scrapes, a reset, lag per group.
  {
    const proc = (n, lag) => p.parse([
      '# TYPE factum_command_process_duration_seconds histogram',
      `factum_command_process_duration_seconds_bucket{aggregate="cart",code="Ok",le="0.01"} ${n}`,
      `factum_command_process_duration_seconds_bucket{aggregate="cart",code="Ok",le="+Inf"} ${n}`,
      `factum_command_process_duration_seconds_sum{aggregate="cart",code="Ok"} ${n / 1000}`,
      `factum_command_process_duration_seconds_count{aggregate="cart",code="Ok"} ${n}`,
      '# TYPE factum_consumer_lag_streams gauge',
      `factum_consumer_lag_streams{group="shop.projection"} ${lag}`,
      '# TYPE factum_consumer_lag_seconds gauge',
      `factum_consumer_lag_seconds{group="shop.projection"} ${lag * 2}`,
    ].join('\n')).families;
    const one = m.summarize([{ t: 0, families: proc(4, 3) }]);
    eq('one scrape: since start', [one.sinceStart, one.commands.total, one.commands.inWindow, one.commands.rate], [true, 4, 4, NaN]);
    eq('one scrape: p50 of all', one.aggregates[0].p50, 0.005);
    const started = p.parse('# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 10\n').families;
    for (const [k, v] of proc(4, 0)) started.set(k, v);
    const avg = m.summarize([{ t: 20000, families: started }]);
    eq('one scrape: the average since the process started', [avg.sinceStart, avg.span, avg.commands.rate], [true, 10, 0.4]);
    const two = m.summarize([{ t: 0, families: proc(4, 3) }, { t: 10000, families: proc(9, 0) }]);
    eq('two scrapes: rate', [two.sinceStart, two.commands.inWindow, two.commands.rate, two.commands.total], [false, 5, 0.5, 9]);
    eq('two scrapes: lag', two.lag.map((l) => [l.group, l.streams, l.seconds, l.history]), [['shop.projection', 0, 0, [3, 0]]]);
    const reset = m.summarize([{ t: 0, families: proc(9, 0) }, { t: 5000, families: proc(2, 0) }]);
    eq('reset: the new counts are the window', [reset.commands.inWindow, reset.commands.rate], [2, 0.4]);
    const idle = m.summarize([{ t: 0, families: proc(9, 0) }, { t: 5000, families: proc(9, 0) }]);
    eq('idle window: no latency', [idle.commands.rate, idle.aggregates[0].p50, idle.aggregates[0].total], [0, NaN, 9]);
    const old = m.summarize([{ t: 0, families: proc(1, 0) }, { t: 100000, families: proc(5, 0) }, { t: 110000, families: proc(9, 0) }]);
    eq('window starts within 60 s', [old.span, old.commands.inWindow], [10, 4]);
    eq('per-interval rates', old.commands.rates, [0.04, 0.4]);
    const empty = m.summarize([{ t: 0, families: p.parse('').families }]);
    eq('no factum series', [empty.known, empty.aggregates, empty.lag], [false, [], []]);
  }
  return JSON.stringify(fails);
})()
