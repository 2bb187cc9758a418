// Items: a page at a time, an editor for one item (create, replace, delete), and an import of
// many from pasted or uploaded JSON (an array, or one object per line).

import * as api from '../api.js';
import {h, clear, note, num, guarded} from '../dom.js';

const PAGE = 25;

export async function itemsView(el, {db, c, container}) {
  const pkdef = container.partitionKey;
  const list = h('div', {id: 'items-list'});
  const editor = h('div', {id: 'item-editor'});
  const pages = [null]; // the continuation of each page shown so far; the first has none
  let page = 0;

  async function show() {
    const r = await api.query(db, c, 'SELECT * FROM c', {maxItems: PAGE, continuation: pages[page]});
    pages[page + 1] = r.continuation;
    clear(list);
    if (r.results.length === 0 && page === 0) {
      list.append(note('No items yet: create one, or import many below.'));
      return;
    }
    list.append(
      h('table', {class: 'list'},
        h('thead', {}, h('tr', {}, h('th', {}, 'id'), h('th', {}, 'Partition key'), h('th', {}, 'Content'), h('th', {}, 'Modified'), h('th', {}, ''))),
        h('tbody', {}, r.results.map(item => h('tr', {},
          h('td', {}, h('a', {href: '#', onclick: e => { e.preventDefault(); edit(item); }}, item.id)),
          h('td', {}, h('code', {}, api.partitionKeyOf(item, pkdef).map(v => JSON.stringify(v)).join(', '))),
          h('td', {class: 'preview'}, h('code', {}, preview(item))),
          h('td', {class: 'nowrap'}, item._ts ? new Date(item._ts * 1000).toLocaleString() : ''),
          h('td', {class: 'actions'}, h('button', {class: 'danger quiet', onclick: guarded(async () => {
            if (!confirm(`Delete item ${item.id}?`)) return;
            await api.deleteItem(db, c, pkdef, item);
            await show();
          })}, 'Delete')))))),
      h('div', {class: 'pager'},
        h('button', {class: 'quiet', disabled: page === 0, onclick: guarded(async () => { page--; await show(); })}, '‹ Previous'),
        h('span', {}, `Page ${page + 1} · ${r.results.length} items · ${num(r.charge, 2)} RU`),
        h('button', {class: 'quiet', id: 'items-next', disabled: !r.continuation, onclick: guarded(async () => { page++; await show(); })}, 'Next ›')));
  }

  // edit opens the editor on an item, or on a new one when item is null.
  function edit(item) {
    const fresh = item === null;
    const shown = fresh ? {id: '', ...Object.fromEntries(pkdef.paths.filter(p => p.split('/').length === 2).map(p => [p.slice(1), '']))} : strip(item);
    const text = h('textarea', {id: 'item-json', class: 'code', rows: 16, spellcheck: false, value: JSON.stringify(shown, null, 2)});
    const out = h('div', {});
    const act = async fn => {
      clear(out);
      try {
        out.append(note(await fn(), 'ok'));
        await show();
      } catch (err) {
        out.append(note(err.message, 'error'));
      }
    };
    const parse = () => {
      let v;
      try { v = JSON.parse(text.value); } catch (e) { throw new Error(`Not valid JSON: ${e.message}`); }
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('An item is a JSON object.');
      if (typeof v.id !== 'string' || v.id === '') throw new Error('An item needs a non-empty string "id".');
      return v;
    };
    clear(editor).append(h('div', {class: 'card'},
      h('h2', {}, fresh ? 'New item' : `Item ${item.id}`),
      text,
      h('div', {class: 'buttons'},
        h('button', {id: 'item-save', onclick: () => act(async () => {
          const v = parse();
          const r = fresh ? await api.createItem(db, c, pkdef, v) : await api.replaceItem(db, c, pkdef, item, v);
          item = r.body;
          return `Saved (${num(r.charge, 2)} RU).`;
        })}, fresh ? 'Create' : 'Save'),
        fresh ? null : h('button', {class: 'danger', onclick: () => act(async () => {
          const r = await api.deleteItem(db, c, pkdef, item);
          clear(editor);
          return `Deleted (${num(r.charge, 2)} RU).`;
        })}, 'Delete'),
        h('button', {class: 'quiet', onclick: () => clear(editor)}, 'Close')),
      out));
    text.focus();
  }

  el.append(
    h('div', {class: 'buttons'}, h('button', {id: 'item-new', onclick: () => edit(null)}, 'New item')),
    editor, list, importForm(db, c, pkdef, show));
  await show();
}

// preview is an item's content on one line, shortened.
function preview(item) {
  const t = JSON.stringify(strip(item));
  return t.length > 90 ? t.slice(0, 90) + '…' : t;
}

// strip leaves out the system properties the server sets, for editing.
function strip(item) {
  const out = {};
  for (const [k, v] of Object.entries(item)) if (!['_rid', '_self', '_etag', '_attachments', '_ts', '_lsn'].includes(k)) out[k] = v;
  return out;
}

// parseItems reads a JSON array or JSON lines. It returns the items and the problems found,
// each named by its position.
export function parseItems(text) {
  const items = [];
  const problems = [];
  const t = text.trim();
  const check = (v, where) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) problems.push(`${where}: not a JSON object`);
    else if (typeof v.id !== 'string' || v.id === '') problems.push(`${where}: no string "id"`);
    else items.push(v);
  };
  if (t.startsWith('[')) {
    let arr;
    try { arr = JSON.parse(t); } catch (e) { return {items, problems: [`not a valid JSON array: ${e.message}`]}; }
    arr.forEach((v, i) => check(v, `item ${i + 1}`));
  } else {
    t.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let v;
      try { v = JSON.parse(line); } catch (e) { problems.push(`line ${i + 1}: ${e.message}`); return; }
      check(v, `line ${i + 1}`);
    });
  }
  return {items, problems};
}

function importForm(db, c, pkdef, refresh) {
  const text = h('textarea', {id: 'import-text', class: 'code', rows: 8, spellcheck: false, placeholder: '[{"id": "1", ...}, ...]  or one JSON object per line'});
  const file = h('input', {id: 'import-file', type: 'file', accept: '.json,.jsonl,.ndjson,application/json'});
  const status = h('div', {id: 'import-status'});
  const button = h('button', {id: 'import-run'}, 'Import');
  file.addEventListener('change', async () => {
    if (file.files[0]) text.value = await file.files[0].text();
  });
  button.addEventListener('click', async () => {
    const {items, problems} = parseItems(text.value);
    clear(status);
    if (items.length === 0) {
      status.append(note(problems[0] || 'Nothing to import.', 'error'));
      return;
    }
    button.disabled = true;
    const failed = [...problems];
    let done = 0, charge = 0, next = 0;
    const progress = h('p', {class: 'note info'});
    status.append(progress);
    const update = () => { progress.textContent = `Imported ${num(done)} of ${num(items.length)}${failed.length ? `, ${failed.length} failed` : ''} · ${num(charge, 2)} RU`; };
    // A few writers at once; a throttled write is retried by api.call.
    const worker = async () => {
      while (next < items.length) {
        const item = items[next++];
        try {
          charge += (await api.upsertItem(db, c, pkdef, item)).charge;
          done++;
        } catch (err) {
          if (err instanceof api.AuthError) throw err;
          failed.push(`id ${item.id}: ${err.message}`);
        }
        update();
      }
    };
    update();
    try {
      await Promise.all([worker(), worker(), worker(), worker()]);
    } finally {
      button.disabled = false;
    }
    progress.className = failed.length ? 'note error' : 'note ok';
    progress.id = 'import-done';
    progress.textContent = `Imported ${num(done)} items · ${num(charge, 2)} RU${failed.length ? ` · ${failed.length} failed:` : ''}`;
    if (failed.length) status.append(h('ul', {class: 'problems'}, failed.slice(0, 50).map(f => h('li', {}, f))));
    await refresh();
  });
  return h('div', {class: 'card', id: 'import'},
    h('h2', {}, 'Import'),
    h('p', {}, 'Paste a JSON array of items or JSON lines, or choose a file. Items are upserted; throttled writes are retried.'),
    text, h('div', {class: 'buttons'}, file, button), status);
}
