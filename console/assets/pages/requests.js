// Requests: was a request appended, and as what? (after a timeout, say)
import { types, seg } from '../api.js';
import { h, mount, json, params } from '../ui.js';
import { findForm, lookup } from './aggregates.js';

export async function render(_parts, ctx) {
  const ts = await types();
  if (ctx.stale()) return;
  mount(h('h1', {}, 'Requests'),
    h('p', { class: 'muted' }, 'A wait that timed out says nothing about the command: look its request ID up. Leave the aggregate ID empty for a create sent without one.'),
    findForm(ts, params(), async (t, id, rid, out) => {
      if (!rid) throw new Error('give the request ID');
      const r = await lookup(t, id, rid);
      if (!r.result) {
        out.replaceChildren(h('div', { class: 'outcome', 'data-test': 'outcome', 'data-outcome': 'not-appended' },
          h('h2', {}, 'Not appended'),
          h('p', {}, `No stream of ${t.name} ${r.id} holds request ${rid}: the command was not appended (it failed, or was never received). Sending it again with the same request ID is safe.`)));
        return;
      }
      const res = r.result;
      out.replaceChildren(h('div', { class: 'outcome', 'data-test': 'outcome', 'data-outcome': res.errorCode },
        h('h2', {}, res.errorCode === 'Ok' ? 'Appended' : 'Failed: ' + res.errorCode),
        h('p', {}, `as version ${res.aggregateVersion} of `,
          h('a', { href: `#/aggregates/${seg(t.segment)}/${seg(r.id)}?v=${res.aggregateVersion}` }, `${t.name} ${r.id}`),
          res.eventNames ? ` (${res.eventNames.join(', ')})` : ''),
        json(res)));
    }));
}
