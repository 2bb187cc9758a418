// A container's settings: its partition key (fixed at creation), its throughput (read and
// changed through its offer), its indexing policy and default time to live.

import * as api from '../api.js';
import {h, clear, note, num} from '../dom.js';
import {form, field} from './catalog.js';

const PER_PARTITION = 10000; // RU/s one physical partition serves; more throughput splits

export async function settingsView(el, {db, c, container}) {
  const pk = container.partitionKey;
  el.append(h('div', {class: 'card'}, h('h2', {}, 'Partition key'),
    h('table', {class: 'kv'}, h('tbody', {},
      h('tr', {}, h('th', {}, 'Paths'), h('td', {}, h('code', {id: 'settings-pk'}, pk.paths.join(', ')))),
      h('tr', {}, h('th', {}, 'Kind'), h('td', {}, pk.kind === 'MultiHash' ? 'MultiHash (hierarchical)' : pk.kind)),
      h('tr', {}, h('th', {}, 'Hash version'), h('td', {}, String(pk.version || 1))))),
    h('p', {class: 'muted'}, 'The partition key cannot change after creation. The Advice tab ranks other candidates.')));

  el.append(await throughputForm(db, container));

  let current = container;
  const policy = h('textarea', {id: 'settings-indexing', class: 'code', rows: 12, spellcheck: false, value: JSON.stringify(container.indexingPolicy, null, 2)});
  const ttl = h('input', {id: 'settings-ttl', type: 'number', min: -1, placeholder: 'off', value: container.defaultTtl === undefined ? '' : container.defaultTtl});
  el.append(form('settings-container', 'Indexing policy and time to live', [
    h('label', {class: 'field wide'}, h('span', {}, 'Indexing policy (JSON)'), policy),
    field('Default TTL (seconds; -1: items choose; empty: off)', ttl),
  ], 'Save', async () => {
    let indexingPolicy;
    try { indexingPolicy = JSON.parse(policy.value); } catch (e) { throw new Error(`The indexing policy is not valid JSON: ${e.message}`); }
    const props = {...current, indexingPolicy};
    delete props.defaultTtl;
    if (ttl.value !== '') props.defaultTtl = Number(ttl.value);
    const r = await api.call('PUT', ['dbs', db, 'colls', c], {body: props, headers: {'if-match': current._etag}});
    current = r.body;
    return `Saved (${num(r.charge, 2)} RU). A changed indexing policy is applied in the background.`;
  }));
}

async function throughputForm(db, container) {
  const offer = await api.offerFor(container._rid);
  if (!offer) {
    return h('div', {class: 'card'}, h('h2', {}, 'Throughput'),
      note(`This container has no throughput of its own: it shares the database ${db}'s.`));
  }
  let current = offer;
  const auto = current.content.offerAutopilotSettings;
  const value = () => auto ? current.content.offerAutopilotSettings.maxThroughput : current.content.offerThroughput;
  const shown = h('strong', {id: 'settings-ru-current'}, `${num(value())} RU/s`);
  const input = h('input', {id: 'settings-ru', type: 'number', min: 400, step: 100, value: value()});
  return form('settings-throughput', 'Throughput', [
    h('p', {class: 'wide-text'}, auto ? 'Autoscale up to ' : 'Manual: ', shown,
      `. Each physical partition serves up to ${num(PER_PARTITION)} RU/s; raising the throughput past that splits partitions.`),
    field(auto ? 'Autoscale maximum RU/s' : 'RU/s', input),
  ], 'Change', async () => {
    const next = structuredClone(current);
    if (auto) next.content.offerAutopilotSettings.maxThroughput = Number(input.value);
    else next.content.offerThroughput = Number(input.value);
    const r = await api.replaceOffer(next);
    current = r.body;
    clear(shown).append(`${num(value())} RU/s`);
    return `Changed to ${num(value())} RU/s (${num(r.charge, 2)} RU).`;
  });
}
