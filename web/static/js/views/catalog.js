// Databases and containers: list, create, delete.

import * as api from '../api.js';
import {h, note, rerender, guarded} from '../dom.js';

const link = (...parts) => '#/' + parts.map(encodeURIComponent).join('/');

// form builds a small form whose submit runs act, showing its error or success in place.
export function form(id, title, fields, label, act) {
  const out = h('div', {class: 'result', id: `${id}-result`});
  const button = h('button', {type: 'submit', id: `${id}-submit`}, label);
  return h('form', {class: 'card inline', id, onsubmit: async e => {
    e.preventDefault();
    out.replaceChildren();
    button.disabled = true;
    try {
      const msg = await act();
      if (msg) out.append(note(msg, 'ok'));
    } catch (err) {
      out.append(note(err.message, 'error'));
    } finally {
      button.disabled = false;
    }
  }}, h('h2', {}, title), h('div', {class: 'fields'}, fields, button), out);
}

export function field(label, input) {
  return h('label', {class: 'field'}, h('span', {}, label), input);
}

export async function databasesView(el) {
  const dbs = await api.listDatabases();
  const id = h('input', {id: 'new-db-id', required: true, placeholder: 'id', pattern: '[^/\\\\?#]+'});
  const ru = h('input', {id: 'new-db-ru', type: 'number', min: 400, step: 100, placeholder: 'none'});
  el.append(
    h('h1', {}, 'Databases'),
    dbs.length === 0 ? note('No databases yet.') :
      h('table', {class: 'list', id: 'db-list'},
        h('thead', {}, h('tr', {}, h('th', {}, 'Database'), h('th', {}, ''))),
        h('tbody', {}, dbs.map(d => h('tr', {},
          h('td', {}, h('a', {href: link('db', d.id)}, d.id)),
          h('td', {class: 'actions'}, h('button', {class: 'danger quiet', onclick: guarded(async () => {
            if (!confirm(`Delete database ${d.id} and everything in it?`)) return;
            await api.deleteDatabase(d.id);
            rerender();
          })}, 'Delete')))))),
    form('new-db', 'New database', [field('Id', id), field('Shared RU/s (optional)', ru)], 'Create', async () => {
      await api.createDatabase(id.value.trim(), Number(ru.value) || 0);
      location.hash = link('db', id.value.trim());
    }));
}

export async function databaseView(el, db) {
  const colls = await api.listContainers(db);
  const id = h('input', {id: 'new-c-id', required: true, placeholder: 'id'});
  const pk = h('input', {id: 'new-c-pk', required: true, placeholder: '/pk', value: '/pk', title: 'A path such as /tenantId; up to three comma-separated paths make a hierarchical key'});
  const ru = h('input', {id: 'new-c-ru', type: 'number', min: 400, step: 100, value: 400, title: 'Leave empty to share the database\'s throughput'});
  const ttl = h('input', {id: 'new-c-ttl', type: 'number', min: -1, placeholder: 'off', title: 'Seconds; -1 lets items set their own ttl without a default'});
  el.append(
    h('h1', {}, db, h('small', {}, ' database')),
    colls.length === 0 ? note('No containers yet.') :
      h('table', {class: 'list', id: 'container-list'},
        h('thead', {}, h('tr', {}, h('th', {}, 'Container'), h('th', {}, 'Partition key'), h('th', {}, 'Default TTL'), h('th', {}, ''))),
        h('tbody', {}, colls.map(c => h('tr', {},
          h('td', {}, h('a', {href: link('db', db, 'c', c.id, 'items')}, c.id)),
          h('td', {}, h('code', {}, c.partitionKey.paths.join(', ')), c.partitionKey.kind === 'MultiHash' ? ' (hierarchical)' : '',
            c.partitionKey.systemKey ? ' (system key: created without a partition key)' : ''),
          h('td', {}, c.defaultTtl === undefined ? 'off' : String(c.defaultTtl)),
          h('td', {class: 'actions'},
            h('a', {href: link('db', db, 'c', c.id, 'partitions')}, 'Partitions'),
            h('button', {class: 'danger quiet', onclick: guarded(async () => {
              if (!confirm(`Delete container ${c.id} and all its items?`)) return;
              await api.deleteContainer(db, c.id);
              rerender();
            })}, 'Delete')))))),
    form('new-c', 'New container', [field('Id', id), field('Partition key', pk), field('RU/s', ru), field('Default TTL (s)', ttl)], 'Create', async () => {
      const paths = pk.value.split(',').map(p => p.trim()).filter(Boolean);
      const props = {id: id.value.trim(), partitionKey: {paths, kind: paths.length > 1 ? 'MultiHash' : 'Hash', version: 2}};
      if (ttl.value !== '') props.defaultTtl = Number(ttl.value);
      await api.createContainer(db, props, Number(ru.value) || 0);
      location.hash = link('db', db, 'c', props.id, 'items');
    }));
}
